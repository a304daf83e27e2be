// P6 DELETE /v1/plannings/{planningID}/runsheets/{runsheetID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { removeRunsheet } from '#shared/planning/plannings';

export const handler = endpoint('P6', async ({ params, caller }) =>
  ok(await removeRunsheet(caller, params.planningID, params.runsheetID)),
);
