// I2 GET /v1/admin/task-import-jobs
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { listJobs } from '#shared/imports/jobs';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I2.ops', async ({ query, caller }) =>
  ok(
    await listJobs(
      caller,
      'ops',
      {
        order: query.order,
        start: query.range_start_created_at,
        end: query.range_end_created_at,
        orgIds: query.org_id,
      },
      { page: query.page, perPage: query.per_page, pageToken: query.page_token },
    ),
  ),
);
