// N1 POST /v1/events
import { clock } from '#shared/clock';
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { publish } from '#shared/notifications/realtime';

export const handler = endpoint('N1', async ({ body }) => {
  let delivered = 0;
  for (const event of body.events)
    delivered += (await publish(event.channel, event.name, event.data ?? null)).delivered;
  return accepted({
    code: 'success',
    message: `${body.events.length} events pushed`,
    server_time: clock.nowIso(),
    delivered,
  });
});
