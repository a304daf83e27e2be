// I1 GET /v1/admin/task-import-jobs/upload-url
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { presignUpload } from '#shared/imports/uploads';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I1.ops', async ({ query, caller }) =>
  ok(await presignUpload(caller, 'ops', query.filename)),
);
