// X31 POST /v1/plannings/{planningID}/routes/{buildID}/apply
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { routingRoutes } from '#shared/routes/routing';
import { applyDryRun, applyOwner } from '#shared/routing/apply-dry-run';

export const handler = endpoint(routingRoutes, 'X31', async ({ params, body, caller, headers }) =>
  ok(
    await applyDryRun(caller, params.planningID, params.buildID, body, applyOwner(caller, headers['idempotency-key'])),
  ),
);
