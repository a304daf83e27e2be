// I3 POST /v1/admin/task-import-jobs/uploads
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { createJobFromUpload } from '#shared/imports/create';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'I3.ops', async ({ event, headers, caller }) => {
  const body = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
  return created(await createJobFromUpload(caller, 'ops', body, headers['content-type']));
});
