/** The cost model's arithmetic, checked by hand on round figures. */
import { describe, expect, it } from 'vitest';
import {
  FLEET,
  type Fleet,
  monthlyCost,
  NOW,
  organisationBatches,
  PRICES,
  SECONDS_PER_MONTH,
  STANDING_FLEET,
  UPLOADER_FLEET,
} from '../../bench/cost-model.ts';
import { UPLOADER_DEFAULTS } from '../../lib/client/uploader-defaults.ts';
import { platformRecordsLogged } from '../../lib/function-logging.ts';
import { GEO_TIME_GRANULARITY_S } from '../../shared/locations/locations.ts';

const zero = { rcu: 0, wcu: 0 };

describe('the cost model', () => {
  it('prices fixes alone as a hand calculation does', () => {
    const fleet = {
      ...FLEET,
      importedTasksPerDay: 0,
      planningsPerDay: 0,
      dispatchers: 0,
      streamShards: 0,
      organisations: 0,
    };
    const lines = monthlyCost(
      {
        fixMove: { rcu: 0.5, wcu: 3 },
        moveIndexWcuPerS: 0,
        fixCrossing: { rcu: 0.5, wcu: 3 },
        fixStill: zero,
        geoTimeRefresh: zero,
        importPerTask: zero,
        runsheetAdded: zero,
        driverAdded: zero,
        pair: zero,
        accept: zero,
        authorizerPerRequest: 0,
      },
      fleet,
    );
    const fixes = (10_000 * SECONDS_PER_MONTH) / 10; // 2.628 G
    const cost = Object.fromEntries(lines.map((line) => [line.component, line.usd]));
    expect(cost['DynamoDB writes']).toBeCloseTo(((fixes * 3) / 1e6) * PRICES.dynamoWritePerMillion, 6);
    expect(cost['DynamoDB reads']).toBeCloseTo(((fixes * 0.5) / 1e6) * PRICES.dynamoReadPerMillion, 6);
    // $1 a million for the first 300 million of a month, $0.90 beyond.
    expect(cost['API Gateway HTTP']).toBeCloseTo(300 + ((fixes - 300e6) / 1e6) * 0.9, 6);
    expect(cost['Lambda requests']).toBeCloseTo((fixes / 1e6) * 0.2, 6);
    expect(cost['Lambda duration']).toBeCloseTo(fixes * 0.5 * 0.025 * PRICES.lambdaPerGbSecond, 6);
    expect(cost['WebSocket messages']).toBe(0);
    // 2.628 G fixes at 3 WCU: $4 927.50 of writes.
    expect(cost['DynamoDB writes']).toBeCloseTo(4927.5, 1);
  });

  it('doubles Lambda requests when the authorizer runs on every request', () => {
    const input = {
      fixMove: zero,
      moveIndexWcuPerS: 0,
      fixCrossing: zero,
      fixStill: zero,
      geoTimeRefresh: zero,
      importPerTask: zero,
      runsheetAdded: zero,
      driverAdded: zero,
      pair: zero,
      accept: zero,
    };
    const fleet = { ...FLEET, streamShards: 0 };
    const once = monthlyCost({ ...input, authorizerPerRequest: 0 }, fleet).find(
      (l) => l.component === 'Lambda requests',
    )!;
    const twice = monthlyCost({ ...input, authorizerPerRequest: 1 }, fleet).find(
      (l) => l.component === 'Lambda requests',
    )!;
    expect(twice.usd).toBeCloseTo(once.usd * 2, 6);
    // The authorizer writes no log line on success: its runs add no log bytes.
    const logs = (authorizerPerRequest: number) =>
      monthlyCost({ ...input, authorizerPerRequest }, fleet).find((l) => l.component === 'CloudWatch Logs ingestion')!;
    expect(logs(1).usd).toBeCloseTo(logs(0).usd, 9);
  });
});

describe('the cost model with the location uploader and CloudWatch (issue 27)', () => {
  const input = {
    fixMove: { rcu: 0.5, wcu: 3 },
    moveIndexWcuPerS: 0,
    fixCrossing: { rcu: 0.5, wcu: 3 },
    fixStill: zero,
    geoTimeRefresh: zero,
    importPerTask: zero,
    runsheetAdded: zero,
    driverAdded: zero,
    pair: zero,
    accept: zero,
    authorizerPerRequest: 0,
  };
  const fixesOnly = {
    importedTasksPerDay: 0,
    planningsPerDay: 0,
    dispatchers: 0,
    streamShards: 0,
    organisations: 0,
  };

  it('prices one X13 per upload interval: a third of the requests and writes for 3 fixes a request', () => {
    expect(UPLOADER_FLEET.fixesPerRequest).toBe(UPLOADER_DEFAULTS.uploadIntervalS / FLEET.fixIntervalS);
    const cost = (fleet: typeof FLEET | typeof UPLOADER_FLEET) =>
      Object.fromEntries(monthlyCost(input, { ...fleet, ...fixesOnly }).map((line) => [line.component, line.usd]));
    const one = cost(FLEET);
    const batched = cost(UPLOADER_FLEET);
    const requests = (10_000 * SECONDS_PER_MONTH) / 30; // 876 M X13s
    expect(batched['API Gateway HTTP']).toBeCloseTo(300 + ((requests - 300e6) / 1e6) * 0.9, 6);
    expect(batched['DynamoDB writes']).toBeCloseTo(((requests * 3) / 1e6) * PRICES.dynamoWritePerMillion, 6);
    expect(batched['DynamoDB writes']).toBeCloseTo(one['DynamoDB writes']! / 3, 6);
    // Log ingestion follows invocations and API requests (the access log); custom metrics do not (5 × 122 metrics whatever the traffic).
    expect(batched['CloudWatch Logs ingestion']).toBeCloseTo(
      ((requests * (FLEET.logBytesPerInvocation + FLEET.accessLogBytesPerRequest)) / 1e9) * PRICES.logsIngestionPerGb,
      6,
    );
    expect(batched['CloudWatch custom metrics']).toBeCloseTo(5 * 122 * 0.3, 6);
    expect(one['CloudWatch custom metrics']).toBe(batched['CloudWatch custom metrics']);
  });

  it('crosses a precision-5 cell once per request as often as once per fix times the fixes a request holds', () => {
    const crossingDearer = { ...input, fixCrossing: { rcu: 0.5, wcu: 9 } };
    const writes = (fleet: typeof UPLOADER_FLEET) =>
      monthlyCost(crossingDearer, { ...fleet, ...fixesOnly }).find((line) => line.component === 'DynamoDB writes')!;
    const requests = (10_000 * SECONDS_PER_MONTH) / 30;
    const crossing = FLEET.crossingShare * 3; // one request in 20
    expect(writes(UPLOADER_FLEET).quantity).toBeCloseTo(requests * (3 * (1 - crossing) + 9 * crossing), 0);
  });

  it('sends a dispatcher one frame per stream shard that carried one of its drivers in the second', () => {
    // 200 drivers an organisation, one X13 every 30 s: 6.67 positions a second.
    const spread = organisationBatches({ ...UPLOADER_FLEET, orgShards: 4, batchWindowS: 1 });
    // Over 4 shards, 1.67 a shard: a shard's batch holds one with probability 1 − e^(−1.67) = 0.811.
    expect(spread.perSecond / UPLOADER_FLEET.organisations).toBeCloseTo(4 * (1 - Math.exp(-200 / 30 / 4)), 9);
    expect(spread.perSecond / UPLOADER_FLEET.organisations).toBeCloseTo(3.244, 3);
    const one = organisationBatches({ ...UPLOADER_FLEET, orgShards: 1, batchWindowS: 1 });
    expect(one.perSecond / UPLOADER_FLEET.organisations).toBeCloseTo(0.9987, 4);
    // The same positions, in fewer and fuller frames: 6.67 × 190 bytes a second in all.
    expect(one.frameBytes * (one.perSecond / UPLOADER_FLEET.organisations)).toBeCloseTo((200 / 30) * 190, 6);
    expect(spread.frameBytes * (spread.perSecond / UPLOADER_FLEET.organisations)).toBeCloseTo((200 / 30) * 190, 6);
    const messages = (shards: number) =>
      monthlyCost(NOW, { ...UPLOADER_FLEET, orgShards: shards, batchWindowS: 1 }).find(
        (l) => l.component === 'WebSocket messages',
      )!;
    // 200 dispatchers: 4 an organisation, each frame one 32 KB message.
    expect(messages(4).quantity).toBeCloseTo(200 * 3.2444 * SECONDS_PER_MONTH, -6);
    expect(messages(1).quantity / messages(4).quantity).toBeCloseTo(0.9987 / 3.2444, 3);
    // A 3 s window on one shard: a batch every 3 s (20 positions each), a third of the frames, the same bytes a second.
    const slow = organisationBatches({ ...UPLOADER_FLEET, orgShards: 1, batchWindowS: 3 });
    expect(slow.perSecond / UPLOADER_FLEET.organisations).toBeCloseTo((1 - Math.exp(-20)) / 3, 9);
    expect(slow.frameBytes).toBeCloseTo(20 * 190, 3);
  });

  it('prices the bytes out: the answers and the frames, after the free 100 GB', () => {
    const fleet = { ...UPLOADER_FLEET, orgShards: 1, batchWindowS: 3 };
    const line = monthlyCost(NOW, fleet).find((l) => l.component === 'Data transfer out')!;
    const requests = monthlyCost(NOW, fleet).find((l) => l.component === 'API Gateway HTTP')!.quantity;
    // 200 dispatchers, a frame each every 3 s of 20 drivers × 190 bytes and its envelope.
    const frames = 200 * (1 - Math.exp(-20)) * (SECONDS_PER_MONTH / 3);
    const gb = (requests * FLEET.answerBytesPerRequest + frames * (20 * 190 + FLEET.frameEnvelopeBytes)) / 1e9;
    expect(line.quantity).toBeCloseTo(gb, 3);
    expect(line.usd).toBeCloseTo((gb - 100) * 0.09, 3);
    expect(line.usd).toBeGreaterThan(100);
  });

  it("prices a moving request as its item and the index's writes of the seconds it covers (the route's rate)", () => {
    const writes = (fleet: typeof FLEET | typeof UPLOADER_FLEET) =>
      monthlyCost(NOW, { ...fleet, crossingShare: 0, standingShare: 0 }).find(
        (l) => l.component === 'DynamoDB writes',
      )!;
    const perRequest = (seconds: number) => (10_000 * SECONDS_PER_MONTH) / seconds;
    const rest = (fleet: typeof FLEET | typeof UPLOADER_FLEET, seconds: number) =>
      writes(fleet).quantity - perRequest(seconds) * (1 + NOW.moveIndexWcuPerS * seconds);
    // The route: 32 index WCU over 1 740 s of driving. One X13 every 30 s: 1.55 WCU; one L1 every 10 s: 1.18.
    expect(1 + NOW.moveIndexWcuPerS * 30).toBeCloseTo(90 / 58, 9);
    expect(1 + NOW.moveIndexWcuPerS * 10).toBeCloseTo(1.184, 3);
    // Everything but the fixes is the same for both fleets.
    expect(rest(FLEET, 10)).toBeCloseTo(rest(UPLOADER_FLEET, 30), 0);
  });

  it('reproduces docs/cost.md’s figure for one L1 a fix before CloudWatch ($6 135)', () => {
    const lines = monthlyCost(NOW, FLEET).filter((line) => !line.component.startsWith('CloudWatch'));
    expect(Math.abs(lines.reduce((sum, line) => sum + line.usd, 0) - 6135)).toBeLessThan(1);
  });
});

describe('the cost model with drivers standing still and without platform log records (issue 27.4)', () => {
  const fixesOnly = {
    importedTasksPerDay: 0,
    planningsPerDay: 0,
    dispatchers: 0,
    streamShards: 0,
    organisations: 0,
  };
  const input = {
    fixMove: { rcu: 0.5, wcu: 3 },
    moveIndexWcuPerS: 0,
    fixCrossing: { rcu: 0.5, wcu: 3 },
    fixStill: { rcu: 0.5, wcu: 1 },
    geoTimeRefresh: { rcu: 0, wcu: 1 },
    importPerTask: zero,
    runsheetAdded: zero,
    driverAdded: zero,
    pair: zero,
    accept: zero,
    authorizerPerRequest: 0,
  };
  const writes = (fleet: Fleet) =>
    monthlyCost(input, { ...fleet, ...fixesOnly }).find((line) => line.component === 'DynamoDB writes')!.quantity;

  it('prices a standing upload as the item write and a granule rewrite once in G (one X13 every 30 s)', () => {
    const requests = (10_000 * SECONDS_PER_MONTH) / 30;
    expect(STANDING_FLEET.standingShare).toBeCloseTo(0.4, 10);
    // Issue 27: G = 300 s, a tenth of a rewrite an upload (test/e2e/capacity.test.ts: 1.1 WCU an upload standing);
    // it was 60 s, half a rewrite (1.5).
    expect(GEO_TIME_GRANULARITY_S).toBe(300);
    expect(writes(STANDING_FLEET)).toBeCloseTo(requests * (0.6 * 3 + 0.4 * (1 + 30 / 300)), 0);
    expect(writes(UPLOADER_FLEET)).toBeCloseTo(requests * 3, 0);
  });

  it('prices one L1 every 10 s standing still as 31 units in 5 minutes (the e2e pin), 1.03 a fix', () => {
    const fixes = (10_000 * SECONDS_PER_MONTH) / 10;
    // 30 fixes in a 300 s granule: 30 item writes and the entry once (7 units a minute, 1.17 a fix, at G = 60 s).
    expect(writes({ ...FLEET, standingShare: 1 }) / fixes).toBeCloseTo(31 / 30, 10);
  });

  it('ingests the metrics line of an invocation, the request line of its error answers, no platform record', () => {
    expect(platformRecordsLogged()).toBe(false);
    // The EMF line always; the request line only for the error answers (shared/http/endpoint.ts).
    expect(FLEET.logBytesPerInvocation).toBeCloseTo(500 + 450 * FLEET.errorAnswerShare, 10);
    expect(platformRecordsLogged('INFO')).toBe(true);
  });
});
