// L1 PUT /v1/driver/location
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { recordFix } from '#shared/locations/locations';
import { locationsRoutes } from '#shared/routes/locations';

export const handler = endpoint(locationsRoutes, 'L1', async ({ body, caller }) => {
  // An older fix than the stored one is ignored, and still answered 200 (contract 4.4).
  await recordFix(caller, body);
  return ok({ status: 'ok' });
});
