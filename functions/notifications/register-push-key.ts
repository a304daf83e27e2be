// N8 POST /v1/push-keys
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { registerPushKey } from '#shared/notifications/push-keys';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N8', async ({ body, caller }) => {
  await registerPushKey(caller, body);
  return { ...success('the push key is registered'), status: 201 };
});
