// R2 GET /v1/broadcast-plans/{plan_id}/pairs
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { listPairRecords } from '#shared/planning/broadcasts';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'R2', async ({ params, caller }) =>
  ok({ pair_records: await listPairRecords(caller, params.plan_id) }),
);
