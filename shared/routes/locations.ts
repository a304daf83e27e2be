/** The locations area's operations (one entry each; see shared/routes.ts for the whole table). */
import * as locations from '#shared/locations/schemas';
import type { RouteDef } from '#shared/routes/types';

export const locationsRoutes = [
  {
    id: 'L1',
    method: 'PUT',
    path: '/v1/driver/location',
    area: 'locations',
    handler: 'locations/record-fix',
    needs: { locations: 'write' },
    access: ['Driver', 'OrgDriver'],
    summary: "Store the driver's current location (an older fix than the stored one is ignored)",
    status: 200,
    request: { body: locations.locationFixBody },
    response: locations.fixReply,
  },
  {
    id: 'L2',
    method: 'GET',
    path: '/v1/driver-locations/{driver_id}',
    area: 'locations',
    handler: 'locations/read-location',
    needs: { locations: 'read' },
    access: ['SysAdmin', 'OrgAdmin', 'OrgTransporter', 'Driver', 'OrgDriver'],
    summary: "Read one driver's current location",
    status: 200,
    request: { params: locations.driverParams },
    response: locations.locationReply,
  },
  {
    id: 'L3',
    method: 'GET',
    path: '/v1/driver-locations/nearest',
    area: 'locations',
    handler: 'locations/nearest',
    needs: {
      locations: 'read',
      locationIndexes: ['GeoOrg', 'GeoAll'],
      unexercised: {
        'index:GeoAll': 'A SysAdmin’s search (every driver); the tests search as an organisation’s people.',
      },
    },
    access: ['SysAdmin', 'OrgAdmin', 'OrgTransporter'],
    summary: 'The closest visible driver to a point, by great-circle distance',
    status: 200,
    request: { query: locations.nearestQuery },
    response: locations.locationReply,
  },
  {
    id: 'L4',
    method: 'GET',
    path: '/v1/driver-locations',
    area: 'locations',
    handler: 'locations/within-radius',
    needs: { locationIndexes: ['GeoOrg', 'GeoAll'] },
    access: ['SysAdmin', 'OrgAdmin', 'OrgTransporter'],
    summary: 'Every visible driver within a radius, nearest first',
    status: 200,
    request: { query: locations.radiusQuery },
    response: locations.locationsReply,
  },
] as const satisfies readonly RouteDef[];
