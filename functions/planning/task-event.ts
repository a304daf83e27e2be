// X20 POST /v1/driver/runsheets/{runsheetID}/tasks/{taskID}/events
import { endpoint } from '#shared/http/endpoint';
import { created, ok } from '#shared/http/responses';
import { recordTaskEvent } from '#shared/planning/execution';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'X20', async ({ params, body, caller }) => {
  const { created: isNew, ...reply } = await recordTaskEvent(caller, params.runsheetID, params.taskID, body);
  // The same event again is recorded once: 201 the first time, 200 after.
  return isNew ? created(reply) : ok(reply);
});
