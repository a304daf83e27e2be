// P10 PUT /v1/plannings/{planningID}/job/result
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { recordJobResult } from '#shared/planning/job-records';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P10', async ({ params, body, caller }) =>
  created(await recordJobResult(caller, params.planningID, body)),
);
