// N7 GET /v1/push-keys
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { listPushKeys } from '#shared/notifications/push-keys';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N7', async ({ query }) =>
  ok(
    await listPushKeys(
      {
        order: query.order,
        start: query.range_start_created_at,
        end: query.range_end_created_at,
        application_key: query.application_key,
        is_qa: query.is_qa,
      },
      { page: query.page, perPage: query.per_page, pageToken: query.page_token },
    ),
  ),
);
