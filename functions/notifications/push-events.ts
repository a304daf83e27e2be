// N1 POST /v1/events
import { clock } from '#shared/clock';
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { pushEvents } from '#shared/notifications/realtime';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N1', async ({ body }) => {
  const delivered = await pushEvents(body.events);
  return accepted({
    code: 'success',
    message: `${body.events.length} events pushed`,
    server_time: clock.nowIso(),
    delivered,
  });
});
