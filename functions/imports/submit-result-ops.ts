// I12 POST /v1/admin/task-import-jobs/{import_job_id}/result
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { submitResult } from '#shared/imports/create';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I12.ops', async ({ params, body, caller }) =>
  created(await submitResult(caller, params.import_job_id, body)),
);
