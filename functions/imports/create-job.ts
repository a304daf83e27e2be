// I4b POST /v1/task-import-jobs
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { createOrgJob } from '#shared/imports/create';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I4b', async ({ body, caller }) =>
  created(await createOrgJob(caller, body)),
);
