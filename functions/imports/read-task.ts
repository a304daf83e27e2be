// X11 GET /v1/tasks/{taskID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { readTask } from '#shared/imports/tasks';
import { importsRoutes } from '#shared/routes/imports';

export const handler = endpoint(importsRoutes, 'X11', async ({ params, caller }) =>
  ok(await readTask(caller, params.taskID)),
);
