// P4 PUT /v1/plannings/{planningID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { renamePlanning } from '#shared/planning/plannings';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P4', async ({ params, body, caller }) =>
  ok(await renamePlanning(caller, params.planningID, body.name, body.version_rev)),
);
