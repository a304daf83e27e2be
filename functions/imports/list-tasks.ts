// X10 GET /v1/tasks
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { listTasks } from '#shared/imports/tasks';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'X10', async ({ query, caller }) =>
  ok(
    await listTasks(
      caller,
      { orgId: query.org_id, importJobId: query.import_job_id, planned: query.planned, order: query.order },
      pageOf(query),
    ),
  ),
);
