// L3 GET /v1/driver-locations/nearest
import { endpoint } from '#shared/http/endpoint';
import { notFound } from '#shared/http/problems';
import { ok } from '#shared/http/responses';
import { nearestDriver } from '#shared/locations/nearest';
import { locationsRoutes } from '#shared/routes/locations';

export const handler = endpoint(locationsRoutes, 'L3', async ({ query, caller }) => {
  const location = await nearestDriver(caller, query, { maxAgeS: query.max_age_s, serviceType: query.service_type });
  if (!location) throw notFound('driver location');
  return ok({ location });
});
