// P4 PUT /v1/plannings/{planningID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { changePlanning, toPlanningView, visiblePlanning } from '#shared/planning/plannings';

export const handler = endpoint('P4', async ({ params, body, caller }) => {
  const planning = await visiblePlanning(caller, params.planningID);
  return ok(await toPlanningView(await changePlanning(planning, body.version_rev, { name: body.name })));
});
