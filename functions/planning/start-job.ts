// P9 POST /v1/plannings/{planningID}/job
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { startPlanningJob } from '#shared/planning/job';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P9', async ({ params, body, caller }) =>
  accepted(await startPlanningJob(caller, params.planningID, body)),
);
