// N2 GET /v1/notifications
import { endpoint } from '#shared/http/endpoint';
import { pageOf, rangeOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { listNotifications } from '#shared/notifications/log';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N2', async ({ query, caller }) =>
  ok(await listNotifications(caller, rangeOf(query), pageOf(query))),
);
