// N10 DELETE /v1/org/me/push-keys
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { removeOwnPushKeys } from '#shared/notifications/push-keys';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N10', async ({ caller }) => {
  const removed = await removeOwnPushKeys(caller);
  return success(`${removed} push keys removed`, { removed });
});
