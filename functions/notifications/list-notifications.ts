// N2 GET /v1/notifications
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { listNotifications } from '#shared/notifications/log';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N2', async ({ query, caller }) =>
  ok(
    await listNotifications(
      caller,
      { order: query.order, start: query.range_start_created_at, end: query.range_end_created_at },
      { page: query.page, perPage: query.per_page, pageToken: query.page_token },
    ),
  ),
);
