// I6 POST /v1/task-import-jobs/{import_job_id}/start
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { startJob } from '#shared/imports/start';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I6', async ({ params, query, caller }) =>
  accepted(await startJob(caller, params.import_job_id, query.dry_run)),
);
