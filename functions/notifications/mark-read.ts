// N3 POST /v1/notifications/{notification_id}/read
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { markRead } from '#shared/notifications/log';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N3', async ({ params, caller }) =>
  ok(await markRead(caller, params.notification_id)),
);
