// P12 GET /v1/plannings/{planningID}/job/status
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { jobStatusView } from '#shared/planning/job-records';
import { visiblePlanning } from '#shared/planning/planning-records';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P12', async ({ params, caller }) =>
  ok(jobStatusView(await visiblePlanning(caller, params.planningID))),
);
