// X14 GET /v1/plannings/{planningID}/runsheets
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { listRunsheets } from '#shared/planning/dispatch-records';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'X14', async ({ params, query, caller }) =>
  ok(await listRunsheets(caller, params.planningID, query.status, pageOf(query))),
);
