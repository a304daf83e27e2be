// R6 POST /v1/broadcast-plans/{plan_id}/pairs/{pair_id}/accepted
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { recordEvent } from '#shared/planning/broadcasts';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'R6', async ({ params, body, caller }) => {
  await recordEvent(params.plan_id, params.pair_id, 'accepted', body.happened_at_utc, { caller });
  return ok({ message: 'the accepted event is recorded' });
});
