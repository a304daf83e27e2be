// X25 GET /v1/plannings/{planningID}/routes
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { routingRoutes } from '#shared/routes/routing';
import { listBuilds } from '#shared/routing/builds';

export const handler = endpoint(routingRoutes, 'X25', async ({ params, query, caller }) =>
  ok(await listBuilds(caller, params.planningID, pageOf(query))),
);
