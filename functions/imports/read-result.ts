// I7 GET /v1/task-import-jobs/{import_job_id}/result
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { readResult } from '#shared/imports/jobs';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I7', async ({ params, caller }) =>
  ok(await readResult(caller, params.import_job_id)),
);
