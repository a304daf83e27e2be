// I4a POST /v1/admin/task-import-jobs
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { createOpsJob } from '#shared/imports/create';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I4a', async ({ body, caller }) =>
  created(await createOpsJob(caller, body)),
);
