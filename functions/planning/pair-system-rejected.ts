// R8 POST /v1/broadcast-plans/{plan_id}/pairs/{pair_id}/system-rejected
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { recordEvent } from '#shared/planning/broadcasts';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'R8', async ({ params, body }) => {
  await recordEvent(params.plan_id, params.pair_id, 'system_rejected', body.happened_at_utc, { reason: body.reason });
  return ok({ message: 'the system rejected event is recorded' });
});
