// X28 DELETE /v1/tasks/{taskID}/tracking
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { trackingRoutes } from '#shared/routes/tracking';
import { revokeTrackingLink } from '#shared/tracking/links';

export const handler = endpoint(trackingRoutes, 'X28', async ({ params, caller }) =>
  success(await revokeTrackingLink(caller, params.taskID)),
);
