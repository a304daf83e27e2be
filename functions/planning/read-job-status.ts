// P12 GET /v1/plannings/{planningID}/job/status
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { jobStatusView, visiblePlanning } from '#shared/planning/plannings';

export const handler = endpoint('P12', async ({ params, caller }) =>
  ok(jobStatusView(await visiblePlanning(caller, params.planningID))),
);
