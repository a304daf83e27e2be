// P8 DELETE /v1/plannings/{planningID}/drivers/{driverID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { removeDriver } from '#shared/planning/planning-members';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P8', async ({ params, caller }) =>
  ok(await removeDriver(caller, params.planningID, params.driverID)),
);
