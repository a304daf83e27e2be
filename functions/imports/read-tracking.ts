// X29 GET /v1/tracking/{token} (public)
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { importsRoutes } from '#shared/routes/imports';
import { readTracking } from '#shared/tracking/links';

export const handler = endpoint(importsRoutes, 'X29', async ({ params, event }) =>
  ok(await readTracking(params.token, event.requestContext.http.sourceIp)),
);
