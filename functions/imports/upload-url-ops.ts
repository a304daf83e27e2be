// I1 GET /v1/admin/task-import-jobs/upload-url
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { presignUpload } from '#shared/imports/uploads';

export const handler = endpoint('I1.ops', async ({ query, caller }) =>
  ok(await presignUpload(caller, 'ops', query.filename)),
);
