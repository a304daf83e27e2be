/** The locations area's operations (one entry each; see shared/routes.ts for the whole table). */
import * as locations from '#shared/locations/schemas';
import { THROTTLES } from '#shared/routes/throttles';
import type { RouteDef } from '#shared/routes/types';

export const locationsRoutes = [
  {
    id: 'L1',
    method: 'PUT',
    path: '/v1/driver/location',
    area: 'locations',
    handler: 'locations/record-fix',
    // The first fix of a minute checks the driver's stops at risk (4.11, planning/late-risk.ts): their runsheets under
    // way (GSI1 on the claims), each one's claim, item and progress; a change of risk written to the claim and told on
    // the planning's channel and to its partners (GSI2, the queue).
    needs: { locations: 'write', main: 'write', indexes: ['GSI1', 'GSI2'], queue: true, realtime: true },
    access: ['Driver', 'OrgDriver'],
    summary: "Store the driver's current location (an older fix than the stored one is ignored)",
    status: 200,
    request: { body: locations.locationFixBody },
    response: locations.fixReply,
  },
  {
    id: 'X13',
    method: 'POST',
    path: '/v1/driver/locations',
    area: 'locations',
    handler: 'locations/record-fixes',
    // The first fix of a minute checks the driver's stops at risk (4.11, planning/late-risk.ts): their runsheets under
    // way (GSI1 on the claims), each one's claim, item and progress; a change of risk written to the claim and told on
    // the planning's channel and to its partners (GSI2, the queue).
    needs: { locations: 'write', main: 'write', indexes: ['GSI1', 'GSI2'], queue: true, realtime: true },
    access: ['Driver', 'OrgDriver'],
    summary:
      "Store a phone's buffer of fixes (1–100): the newest one newer than the stored fix is stored as L1 stores it, the others are counted as ignored",
    status: 200,
    request: { body: locations.locationFixesBody },
    response: locations.fixesReply,
  },
  {
    id: 'L2',
    method: 'GET',
    path: '/v1/driver-locations/{driver_id}',
    area: 'locations',
    handler: 'locations/read-location',
    // SysAdmin's read (and a driver's own) needs the driver's organisation, the key of its location: its user item.
    needs: { main: 'read', locations: 'read' },
    access: ['SysAdmin', 'OrgAdmin', 'OrgTransporter', 'Driver', 'OrgDriver'],
    scopes: ['locations:read'],
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
    needs: { locations: 'read', locationIndexes: ['Geo'] },
    access: ['SysAdmin', 'OrgAdmin', 'OrgTransporter'],
    scopes: ['locations:read'],
    throttle: THROTTLES.search,
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
    needs: { locations: 'read', locationIndexes: ['Geo'] },
    access: ['SysAdmin', 'OrgAdmin', 'OrgTransporter'],
    scopes: ['locations:read'],
    throttle: THROTTLES.search,
    summary: 'Every visible driver within a radius, nearest first',
    status: 200,
    request: { query: locations.radiusQuery },
    response: locations.locationsReply,
  },
] as const satisfies readonly RouteDef[];
