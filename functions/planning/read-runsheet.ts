// X22 GET /v1/plannings/{planningID}/runsheets/{runsheetID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { readRunsheet } from '#shared/planning/execution';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'X22', async ({ params, caller }) =>
  ok(await readRunsheet(caller, params.planningID, params.runsheetID)),
);
