// X16 POST /v1/plannings/{planningID}/runsheets/{runsheetID}/assign
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { assignRunsheet } from '#shared/planning/dispatch';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'X16', async ({ params, body, caller }) =>
  ok(await assignRunsheet(caller, params.planningID, params.runsheetID, body.driver_id)),
);
