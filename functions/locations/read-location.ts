// L2 GET /v1/driver-locations/{driver_id}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { readDriverLocation } from '#shared/locations/positions';
import { locationsRoutes } from '#shared/routes/locations';

export const handler = endpoint(locationsRoutes, 'L2', async ({ params, caller }) =>
  ok({ location: await readDriverLocation(caller, params.driver_id) }),
);
