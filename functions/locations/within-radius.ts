// L4 GET /v1/driver-locations
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { driversWithin } from '#shared/locations/search';
import { locationsRoutes } from '#shared/routes/locations';

export const handler = endpoint(locationsRoutes, 'L4', async ({ query, caller }) =>
  ok({
    locations: await driversWithin(caller, query, query.radius, {
      maxAgeS: query.max_age_s,
      serviceType: query.service_type,
    }),
  }),
);
