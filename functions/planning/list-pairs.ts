// R2 GET /v1/broadcast-plans/{plan_id}/pairs
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { listPairRecords } from '#shared/planning/pair-records';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'R2', async ({ params, query, caller }) => {
  const found = await listPairRecords(caller, params.plan_id, pageOf(query));
  return ok({ pair_records: found.items, meta: found.meta });
});
