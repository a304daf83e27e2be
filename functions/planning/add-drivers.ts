// P7 POST /v1/plannings/{planningID}/drivers
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { addDrivers } from '#shared/planning/planning-members';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P7', async ({ params, body, caller }) =>
  ok(await addDrivers(caller, params.planningID, body.drivers)),
);
