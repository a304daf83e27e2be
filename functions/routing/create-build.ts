// X23 POST /v1/plannings/{planningID}/routes
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { routingRoutes } from '#shared/routes/routing';
import { startBuild } from '#shared/routing/builds';

export const handler = endpoint(routingRoutes, 'X23', async ({ params, body, caller }) =>
  accepted(await startBuild(caller, params.planningID, body)),
);
