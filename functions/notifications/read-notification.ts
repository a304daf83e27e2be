// N4 GET /v1/notifications/{notification_id}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { readNotification } from '#shared/notifications/log';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N4', async ({ params, caller }) =>
  ok(await readNotification(caller, params.notification_id)),
);
