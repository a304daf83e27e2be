// X19 POST /v1/broadcast-plans/{plan_id}/pairs/{pair_id}/withdrawn
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { recordEvent } from '#shared/planning/broadcasts';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'X19', async ({ params, body, caller }) => {
  await recordEvent(params.plan_id, params.pair_id, 'withdrawn', body.happened_at_utc, { caller, reason: body.reason });
  return ok({ message: 'the runsheet is given back: it goes back to dispatch' });
});
