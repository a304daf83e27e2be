// I5 GET /v1/admin/task-import-jobs/{import_job_id}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { toJobView, visibleJob } from '#shared/imports/jobs';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I5.ops', async ({ params, caller }) =>
  ok(toJobView(await visibleJob(caller, params.import_job_id))),
);
