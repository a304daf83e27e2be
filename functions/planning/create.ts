// P2 POST /v1/plannings
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { createPlanning } from '#shared/planning/plannings';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P2', async ({ body, caller }) =>
  created(await createPlanning(caller, body.name)),
);
