/**
 * Every operation's DynamoDB cost as the test suite saw it. Each test file records the tally of every request its
 * functions served (test/support/record-setup.ts, into .test-output/capacity/); here the successful ones (2xx) are
 * grouped by operation. The suite calls every operation of the contract in the flows its tests tell
 * (test/proof/capacity.test.ts checks that none is missing), so the medians are what an operation typically costs;
 * `bench/capacity.ts` measures the hot ones in one fixed scenario, next to their floors.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { routes } from '#shared/routes';
import { CAPACITY_DIR, type RequestTally } from './tallies.ts';

export interface OperationCost {
  op: string;
  requests: number;
  calls: number;
  rcu: number;
  wcu: number;
  rcuMax: number;
  wcuMax: number;
}

/** Every request recorded by the last `npm test` (empty when there was none). */
export function readTallies(dir = CAPACITY_DIR): RequestTally[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((file) =>
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as RequestTally),
  );
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** The successful requests grouped by operation, in the route table's order; operations never answered 2xx left out. */
export function costByOperation(tallies: RequestTally[]): OperationCost[] {
  const byOp = new Map<string, RequestTally[]>();
  for (const tally of tallies) {
    if (tally.status < 200 || tally.status > 299) continue;
    byOp.set(tally.op, [...(byOp.get(tally.op) ?? []), tally]);
  }
  return routes.flatMap(({ id }) => {
    const seen = byOp.get(id);
    if (!seen) return [];
    return [
      {
        op: id,
        requests: seen.length,
        calls: median(seen.map((t) => t.calls)),
        rcu: median(seen.map((t) => t.rcu)),
        wcu: median(seen.map((t) => t.wcu)),
        rcuMax: Math.max(...seen.map((t) => t.rcu)),
        wcuMax: Math.max(...seen.map((t) => t.wcu)),
      },
    ];
  });
}

export function benchOperations(): void {
  const tallies = readTallies();
  console.log('\n## DynamoDB capacity of every operation, as the test suite called it (2xx requests; medians)');
  if (tallies.length === 0) {
    console.log('(no recorded requests: run `npm test` first; it records every request’s tally in .test-output/)');
    return;
  }
  const costs = costByOperation(tallies);
  console.log(
    `${tallies.length} requests recorded by the last \`npm test\`; ${costs.length} of ${routes.length} operations answered 2xx`,
  );
  console.log('| op | route | requests | calls | RCU | WCU | RCU max | WCU max |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const cost of costs) {
    const route = routes.find((r) => r.id === cost.op)!;
    console.log(
      `| ${cost.op} | ${route.method} ${route.path} | ${cost.requests} | ${cost.calls} | ${cost.rcu} | ${cost.wcu} | ${cost.rcuMax} | ${cost.wcuMax} |`,
    );
  }
  const missing = routes.filter((r) => !costs.some((c) => c.op === r.id)).map((r) => r.id);
  if (missing.length > 0) console.log(`never answered 2xx in the suite: ${missing.join(', ')}`);
}
