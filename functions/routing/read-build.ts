// X24 GET /v1/plannings/{planningID}/routes/{buildID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { routingRoutes } from '#shared/routes/routing';
import { readBuild } from '#shared/routing/builds';

export const handler = endpoint(routingRoutes, 'X24', async ({ params, caller }) =>
  ok(await readBuild(caller, params.planningID, params.buildID)),
);
