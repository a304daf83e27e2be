/** The cost model's arithmetic, checked by hand on round figures. */
import { describe, expect, it } from 'vitest';
import { FLEET, monthlyCost, PRICES, SECONDS_PER_MONTH } from '../../bench/cost-model.ts';

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
        fixCrossing: { rcu: 0.5, wcu: 3 },
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
    expect(cost['API Gateway HTTP']).toBeCloseTo(fixes / 1e6, 6);
    expect(cost['Lambda requests']).toBeCloseTo((fixes / 1e6) * 0.2, 6);
    expect(cost['Lambda duration']).toBeCloseTo(fixes * 0.5 * 0.025 * PRICES.lambdaPerGbSecond, 6);
    expect(cost['WebSocket messages']).toBe(0);
    // 2.628 G fixes at 3 WCU: $4 927.50 of writes.
    expect(cost['DynamoDB writes']).toBeCloseTo(4927.5, 1);
  });

  it('doubles Lambda requests when the authorizer runs on every request', () => {
    const input = {
      fixMove: zero,
      fixCrossing: zero,
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
  });
});
