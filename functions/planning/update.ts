// P4 PUT /v1/plannings/{planningID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { renamePlanning } from '#shared/planning/plannings';

export const handler = endpoint('P4', async ({ params, body, caller }) =>
  ok(await renamePlanning(caller, params.planningID, body.name, body.version_rev)),
);
