// X30 POST /v1/plannings/{planningID}/routes/insertions
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { routingRoutes } from '#shared/routes/routing';
import { startInsertion } from '#shared/routing/builds';

export const handler = endpoint(routingRoutes, 'X30', async ({ params, body, caller }) =>
  accepted(await startInsertion(caller, params.planningID, body)),
);
