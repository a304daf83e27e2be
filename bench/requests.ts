/**
 * Through the local host: login p50, and an authenticated GET against a raw DynamoDB GetItem on the same emulator.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { BENCH_ADMIN, startBenchHost } from './host.ts';

const ADMIN = BENCH_ADMIN;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

async function timed(fn: () => Promise<unknown>, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return times;
}

export async function benchRequests() {
  const host = await startBenchHost('requests');
  const login = () =>
    fetch(`${host.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: ADMIN }),
    }).then((r) => r.json() as Promise<{ bearer_token: string }>);
  await login();
  const loginTimes = await timed(login, 30);
  console.log('\n## Requests through the local host');
  console.log(
    `login (argon2id m=19 MiB t=2)  p50 ${percentile(loginTimes, 50).toFixed(1)} ms  p95 ${percentile(loginTimes, 95).toFixed(1)} ms  (30 runs)`,
  );

  const { bearer_token } = await login();
  const org = (await (
    await fetch(`${host.url}/v1/admin/organisations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer_token}` },
      body: JSON.stringify({ name: 'Bench', kind: 'merchant' }),
    })
  ).json()) as { id: string };
  const { db, mainTableName } = await import('#shared/db/client');
  const get = async () => {
    const response = await fetch(`${host.url}/v1/admin/organisations/${org.id}`, {
      headers: { authorization: `Bearer ${bearer_token}` },
    });
    if (response.status !== 200) throw new Error(`GET answered ${response.status}`);
    await response.arrayBuffer();
  };
  const raw = () =>
    db().send(new GetCommand({ TableName: mainTableName(), Key: { PK: `ORG#${org.id}`, SK: 'PROFILE' } }));
  await timed(get, 50);
  await timed(raw, 50);
  const runs = 400;
  const getTimes = await timed(get, runs);
  const rawTimes = await timed(raw, runs);
  const getP50 = percentile(getTimes, 50);
  const rawP50 = percentile(rawTimes, 50);
  console.log(
    `authenticated GET /v1/admin/organisations/{orgID}  p50 ${getP50.toFixed(2)} ms  p99 ${percentile(getTimes, 99).toFixed(2)} ms`,
  );
  console.log(
    `raw DynamoDB GetItem (same emulator, same item)     p50 ${rawP50.toFixed(2)} ms  p99 ${percentile(rawTimes, 99).toFixed(2)} ms`,
  );
  console.log(`ratio GET / GetItem (p50): ${(getP50 / rawP50).toFixed(2)}x  (budget 3x; ${runs} runs each)`);
}
