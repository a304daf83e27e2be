// L1 PUT /v1/driver/location
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { storeFix } from '#shared/locations/fixes';
import { checkRisksAfterFix } from '#shared/planning/late-risk';
import { locationsRoutes } from '#shared/routes/locations';

export const handler = endpoint(locationsRoutes, 'L1', async ({ body, caller }) => {
  // An older fix than the stored one is ignored, and still answered 200 (contract 4.4). The first fix of a minute
  // checks the driver's stops at risk (4.11).
  await checkRisksAfterFix(await storeFix(caller, body));
  return ok({ status: 'ok' });
});
