// N6 POST /v1/push-messages
import { clock } from '#shared/clock';
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { sendPushMessages } from '#shared/notifications/push-keys';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N6', async ({ body }) => {
  const tally = await sendPushMessages(body);
  return accepted({
    code: 'success',
    message: `${body.push_messages.length} push messages sent`,
    server_time: clock.nowIso(),
    ...tally,
  });
});
