// N8 POST /v1/push-keys
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { registerPushKey } from '#shared/notifications/push-keys';

export const handler = endpoint('N8', async ({ body, caller }) => {
  await registerPushKey(caller, body);
  return { ...success('the push key is registered'), status: 201 };
});
