/** `npm run bench`: the monthly cost of the reference fleet, before issue 15 and now (from the measured units). */
import type { Measured } from './capacity.ts';
import { BEFORE, FLEET, type Line, type ModelInput, monthlyCost, NOW, PRICES } from './cost-model.ts';

const per = (measured: Measured[], id: string, what?: string) => {
  const found = measured.find((m) => m.id === id && (what === undefined || m.what === what));
  if (!found) throw new Error(`no measurement of ${id} ${what ?? ''}`);
  const count = found.per?.count ?? 1;
  return { rcu: found.tally.rcu / count, wcu: found.tally.wcu / count };
};

/** The model's input from this run's measurements. */
export function modelInput(measured: Measured[]): ModelInput {
  return {
    // A 30 m move stays in its precision-6 cell (1 WCU); an upload's cost over a real route needs the service's clock
    // moved: the units test/e2e/capacity.test.ts pins for a 30-minute city route.
    fixMove: NOW.fixMove,
    moveIndexWcuPerS: NOW.moveIndexWcuPerS,
    fixCrossing: per(measured, 'L1', 'crossing a precision-5 cell'),
    // Not in this run's scenario (it needs the service's clock moved): the units test/e2e/capacity.test.ts pins.
    fixStill: NOW.fixStill,
    geoTimeRefresh: NOW.geoTimeRefresh,
    importPerTask: per(measured, 'I6'),
    runsheetAdded: per(measured, 'P5'),
    driverAdded: per(measured, 'P7'),
    pair: per(measured, 'P9'),
    accept: per(measured, 'R6'),
    // API Gateway caches the authorizer's answer per token for 300 s: one run per driver per 30 fixes.
    authorizerPerRequest: FLEET.fixIntervalS / FLEET.authorizerCacheS,
  };
}

const usd = (n: number) => `$${n.toLocaleString('en-US', { maximumFractionDigits: 0 })}`;
const qty = (n: number) =>
  n >= 1e9
    ? `${(n / 1e9).toFixed(2)} G`
    : n >= 1e6
      ? `${(n / 1e6).toFixed(1)} M`
      : n.toLocaleString('en-US', { maximumFractionDigits: 0 });

function table(title: string, lines: Line[]) {
  const total = lines.reduce((sum, line) => sum + line.usd, 0);
  console.log(`\n### ${title}: ${usd(total)} a month`);
  console.log('| component | quantity | cost / month |');
  console.log('|---|---|---|');
  for (const line of lines)
    console.log(`| ${line.component} | ${qty(line.quantity)} ${line.unit} | ${usd(line.usd)} |`);
  const top = [...lines].sort((a, b) => b.usd - a.usd).slice(0, 3);
  console.log(`Largest: ${top.map((line) => `${line.component} (${usd(line.usd)})`).join(', ')}`);
  return total;
}

export function benchCost(measured: Measured[]) {
  console.log(
    `\n## Monthly cost of the reference fleet (${FLEET.drivers} drivers, a fix every ${FLEET.fixIntervalS} s; ${FLEET.importedTasksPerDay} imported tasks and ${FLEET.planningsPerDay} plannings of ${FLEET.runsheetsPerPlanning} runsheets × ${FLEET.driversPerPlanning} drivers, ${FLEET.candidates} candidates, a day; ${FLEET.dispatchers} dispatchers watching)`,
  );
  console.log(
    `Prices (us-east-1): DynamoDB on-demand $${PRICES.dynamoWritePerMillion}/M writes, $${PRICES.dynamoReadPerMillion}/M reads; Lambda Arm $${PRICES.lambdaPerGbSecond}/GB-s, $${PRICES.lambdaPerMillionRequests}/M requests; HTTP API $${PRICES.httpApiPerMillion}/M; WebSocket $${PRICES.websocketPerMillionMessages}/M messages, $${PRICES.websocketPerMillionConnectionMinutes}/M connection-minutes (sources in bench/cost-model.ts).`,
  );
  const before = table('Before issue 15 (the issue’s figures; authorizer on every request)', monthlyCost(BEFORE));
  const after = table('Now (units measured above)', monthlyCost(modelInput(measured)));
  console.log(`Now / before: ${(after / before).toFixed(2)}`);
}
