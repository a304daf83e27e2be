// X13 POST /v1/driver/locations
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { recordFixes } from '#shared/locations/fixes';
import { checkRisksAfterFix } from '#shared/planning/late-risk';
import { locationsRoutes } from '#shared/routes/locations';

export const handler = endpoint(locationsRoutes, 'X13', async ({ body, caller }) => {
  // One write at most: the newest fix, if it is newer than the stored one; every other fix is counted as ignored.
  // The first fix of a minute checks the driver's stops at risk (4.11).
  const { accepted, ignored, stored } = await recordFixes(caller, body.fixes);
  await checkRisksAfterFix(stored);
  return ok({ status: 'ok', accepted, ignored });
});
