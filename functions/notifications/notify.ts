// N5 POST /v1/notifications
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { notify } from '#shared/notifications/log';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N5', async ({ body }) =>
  created(await notify(body.event_type, body.event_data)),
);
