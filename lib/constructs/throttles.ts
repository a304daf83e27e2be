/**
 * Throttles from the route tables (issue 33 item 10): the stage-wide figure both API stages share, each throttled
 * route's entry in its stage's route settings, and the opt-in reserved concurrency of the throttled functions.
 * Figures: shared/routes/throttles.ts; why each: docs/throttling.md.
 */
import type { IConstruct } from 'constructs';
import { STAGE_THROTTLE } from '#shared/routes/throttles';
import type { Throttle } from '#shared/routes/types';

/** The stage-wide throttle (DefaultRouteSettings) of the HTTP and the WebSocket stage. */
export const STAGE_THROTTLE_SETTINGS = { rateLimit: STAGE_THROTTLE.rate, burstLimit: STAGE_THROTTLE.burst };

/**
 * A stage's `RouteSettings` (CloudFormation's names: the L1 property is passed through as written): one entry per
 * route key with a throttle of its own. API Gateway refuses a key no route of the API has, so the stage must be
 * created after these routes (lib/stacks/gateway-stack.ts, lib/stacks/realtime-stack.ts).
 */
export function routeSettings(routes: readonly { key: string; throttle?: Throttle }[]) {
  return Object.fromEntries(
    routes.flatMap(({ key, throttle }) =>
      throttle ? [[key, { ThrottlingRateLimit: throttle.rate, ThrottlingBurstLimit: throttle.burst }]] : [],
    ),
  );
}

/**
 * The reserved concurrency of a throttled route's function, only with `-c reserveConcurrency=true`: reserving takes
 * that many from the account's pool, and Lambda refuses a reservation that leaves it less than 100 unreserved, so
 * on a new account (a quota of 10) the deploy would fail (docs/throttling.md). Off, the route's throttle bounds it.
 */
export function reservedConcurrency(scope: IConstruct, throttle: Throttle | undefined): number | undefined {
  const value = String(scope.node.tryGetContext('reserveConcurrency') ?? 'false');
  if (value !== 'true' && value !== 'false')
    throw new Error(`reserveConcurrency "${value}": use true or false (docs/throttling.md).`);
  return value === 'true' && throttle ? throttle.concurrency : undefined;
}
