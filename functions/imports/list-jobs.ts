// I2 GET /v1/task-import-jobs
import { endpoint } from '#shared/http/endpoint';
import { pageOf, rangeOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { listJobs } from '#shared/imports/jobs';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I2', async ({ query, caller }) =>
  ok(await listJobs(caller, 'org', rangeOf(query), pageOf(query))),
);
