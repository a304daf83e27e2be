// I9 GET /v1/admin/task-import-jobs/{import_job_id}/status
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { toStatusRecord, visibleJob } from '#shared/imports/jobs';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I9.ops', async ({ params, caller }) =>
  ok(toStatusRecord(await visibleJob(caller, params.import_job_id))),
);
