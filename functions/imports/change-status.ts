// I10 PUT /v1/task-import-jobs/{import_job_id}/status
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { changeStatus } from '#shared/imports/jobs';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I10', async ({ params, body, caller }) =>
  ok(await changeStatus(caller, params.import_job_id, body.prev_status, body.next_status)),
);
