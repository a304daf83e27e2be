// P5 POST /v1/plannings/{planningID}/runsheets
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { addRunsheets } from '#shared/planning/planning-members';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P5', async ({ params, body, caller }) =>
  ok(await addRunsheets(caller, params.planningID, body.runsheets)),
);
