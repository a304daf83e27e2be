// I11 POST /v1/admin/task-import-jobs/{import_job_id}/fail
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { failJob } from '#shared/imports/jobs';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I11.ops', async ({ params, body, caller }) =>
  ok(await failJob(caller, params.import_job_id, body.reason)),
);
