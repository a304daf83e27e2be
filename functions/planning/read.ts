// P3 GET /v1/plannings/{planningID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { visiblePlanning } from '#shared/planning/planning-records';
import { toPlanningView } from '#shared/planning/plannings';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P3', async ({ params, caller }) =>
  ok(await toPlanningView(await visiblePlanning(caller, params.planningID))),
);
