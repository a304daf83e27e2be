// X13 POST /v1/driver/locations
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { recordFixes } from '#shared/locations/locations';
import { locationsRoutes } from '#shared/routes/locations';

export const handler = endpoint(locationsRoutes, 'X13', async ({ body, caller }) => {
  // One write at most: the newest fix, if it is newer than the stored one; every other fix is counted as ignored.
  const { accepted, ignored } = await recordFixes(caller, body.fixes);
  return ok({ status: 'ok', accepted, ignored });
});
