// X18 POST /v1/plannings/{planningID}/runsheets/{runsheetID}/cancel
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { cancelRunsheet } from '#shared/planning/dispatch';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'X18', async ({ params, body, caller }) =>
  ok(await cancelRunsheet(caller, params.planningID, params.runsheetID, body.reason)),
);
