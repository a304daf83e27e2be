// N7 GET /v1/push-keys
import { endpoint } from '#shared/http/endpoint';
import { pageOf, rangeOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { listPushKeys } from '#shared/notifications/push-keys';
import { notificationsRoutes } from '#shared/routes/notifications';

export const handler = endpoint(notificationsRoutes, 'N7', async ({ query }) =>
  ok(
    await listPushKeys(
      {
        ...rangeOf(query),
        application_key: query.application_key,
        is_qa: query.is_qa,
      },
      pageOf(query),
    ),
  ),
);
