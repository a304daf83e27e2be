// X17 POST /v1/plannings/{planningID}/runsheets/{runsheetID}/reoffer
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { reofferRunsheet } from '#shared/planning/dispatch';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'X17', async ({ params, body, caller }) =>
  accepted(await reofferRunsheet(caller, params.planningID, params.runsheetID, body)),
);
