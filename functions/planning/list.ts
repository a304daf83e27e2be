// P1 GET /v1/plannings
import { endpoint } from '#shared/http/endpoint';
import { pageOf, rangeOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { listPlannings } from '#shared/planning/plannings';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P1', async ({ query, caller }) =>
  ok(await listPlannings(caller, rangeOf(query), pageOf(query), query.org_id)),
);
