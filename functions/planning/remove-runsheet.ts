// P6 DELETE /v1/plannings/{planningID}/runsheets/{runsheetID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { removeRunsheet } from '#shared/planning/planning-members';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P6', async ({ params, caller }) =>
  ok(await removeRunsheet(caller, params.planningID, params.runsheetID)),
);
