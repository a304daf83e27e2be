// P15 POST /v1/plannings/{planningID}/job/failed
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { moveJobByRequest } from '#shared/planning/job';
import { jobStatusView } from '#shared/planning/job-records';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P15', async ({ params, caller }) =>
  ok(jobStatusView(await moveJobByRequest(caller, params.planningID, 'failed'))),
);
