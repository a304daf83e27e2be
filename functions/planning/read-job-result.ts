// P11 GET /v1/plannings/{planningID}/job/result
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { readJobResult } from '#shared/planning/job-records';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P11', async ({ params, caller }) =>
  ok(await readJobResult(caller, params.planningID)),
);
