// R7 POST /v1/broadcast-plans/{plan_id}/pairs/{pair_id}/rejected
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { recordEvent } from '#shared/planning/broadcasts';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'R7', async ({ params, body, caller }) => {
  await recordEvent(params.plan_id, params.pair_id, 'rejected', body.happened_at_utc, { caller });
  return ok({ message: 'the rejected event is recorded' });
});
