// P9 POST /v1/plannings/{planningID}/job
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { startPlanningJob } from '#shared/planning/job';

export const handler = endpoint('P9', async ({ params, body, caller }) =>
  accepted(await startPlanningJob(caller, params.planningID, body)),
);
