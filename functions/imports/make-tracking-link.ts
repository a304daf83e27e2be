// X27 POST /v1/tasks/{taskID}/tracking
import { endpoint } from '#shared/http/endpoint';
import { trackingLinkKey } from '#shared/http/page-token-key';
import { created, ok } from '#shared/http/responses';
import { importsRoutes } from '#shared/routes/imports';
import { makeTrackingLink } from '#shared/tracking/links';

export const handler = endpoint(importsRoutes, 'X27', async ({ params, caller, headers, event }) => {
  // The link points where this request came in: the page /track/{token} is served from the same host.
  const origin = `${headers['x-forwarded-proto'] ?? 'https'}://${headers['host'] ?? event.requestContext.domainName}`;
  const { created: isNew, ...reply } = await makeTrackingLink(caller, params.taskID, origin, await trackingLinkKey());
  // The first time 201, the same link after 200.
  return isNew ? created(reply) : ok(reply);
});
