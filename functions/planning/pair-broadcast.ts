// R5 POST /v1/broadcast-plans/{plan_id}/pairs/{pair_id}/broadcast
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { recordEvent } from '#shared/planning/broadcasts';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'R5', async ({ params, body }) => {
  await recordEvent(params.plan_id, params.pair_id, 'broadcast', body.happened_at_utc, {});
  return ok({ message: 'the broadcast event is recorded' });
});
