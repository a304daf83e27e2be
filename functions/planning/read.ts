// P3 GET /v1/plannings/{planningID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { toPlanningView, visiblePlanning } from '#shared/planning/plannings';

export const handler = endpoint('P3', async ({ params, caller }) =>
  ok(await toPlanningView(await visiblePlanning(caller, params.planningID))),
);
