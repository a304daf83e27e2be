// X28 DELETE /v1/tasks/{taskID}/tracking
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { importsRoutes } from '#shared/routes/imports';
import { revokeTrackingLink } from '#shared/tracking/links';

export const handler = endpoint(importsRoutes, 'X28', async ({ params, caller }) =>
  success(await revokeTrackingLink(caller, params.taskID)),
);
