// X29 GET /v1/tracking/{token} (public)
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { trackingRoutes } from '#shared/routes/tracking';
import { readTracking } from '#shared/tracking/links';

export const handler = endpoint(trackingRoutes, 'X29', async ({ params, event }) =>
  ok(await readTracking(params.token, event.requestContext.http.sourceIp)),
);
