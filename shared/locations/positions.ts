/**
 * Where drivers are now, as others read it: L1 (`readDriverLocation`: a driver's own, or their organisation's for
 * those who watch it), the current fixes the dispatch judges by (`currentFixes`, `currentPositions`), and the live
 * stream's position of a changed location item (`livePositionOf`, for shared/notifications/live-positions.ts).
 */
import { type Caller, hasRole, hasScope, isSysAdmin } from '#shared/auth/caller';
import { getAll, locationsTableName } from '#shared/db/client';
import { notFound } from '#shared/errors';
import type { Point } from '#shared/locations/geo';
import {
  currentOrganisation,
  type LocationView,
  locationKey,
  readLocation,
  toRecord,
  view,
} from '#shared/locations/locations';

/**
 * Current positions of some drivers of an organisation or freelance (the planning job ranks its candidates by them):
 * each under the organisation's key, and under its own when it is not there (a freelance driver).
 */
export async function currentPositions(orgId: string, driverIds: string[]): Promise<Map<string, Point>> {
  return currentFixes(orgId, driverIds);
}

/**
 * Each driver's current position and when the service stored it (`server_time`): what dispatch judges freshness by.
 * Batched (the wave worker reads a planning's drivers every sweep: 700 drivers are 7 calls, not 700): the
 * organisation's fixes first, then the freelance fixes of those without one (only those, `orgId` null).
 */
export async function currentFixes(
  orgId: string | null,
  driverIds: string[],
): Promise<Map<string, Point & { server_time: string }>> {
  const found = new Map<string, Point & { server_time: string }>();
  const read = async (ids: string[], owner: string | null) => {
    const items = await getAll(
      locationsTableName(),
      ids.map((id) => locationKey(id, owner)),
    );
    for (const item of items) {
      const location = toRecord(item);
      found.set(location.user_id, {
        latitude: location.latitude,
        longitude: location.longitude,
        server_time: location.server_time,
      });
    }
  };
  const unique = [...new Set(driverIds)];
  if (orgId !== null) await read(unique, orgId);
  await read(
    unique.filter((id) => !found.has(id)),
    null,
  );
  return found;
}

/**
 * L2: SysAdmin any driver; OrgAdmin, OrgTransporter and a partner with `locations:read` their organisation's drivers;
 * a driver themself.
 */
export async function readDriverLocation(caller: Caller, driverId: string): Promise<LocationView> {
  const orgId = await organisationOf(caller, driverId);
  const location = orgId === undefined ? undefined : await readLocation(driverId, orgId);
  const visible =
    location &&
    (isSysAdmin(caller) ||
      caller.id === driverId ||
      (watchesOrganisation(caller) && caller.orgId !== null && location.org_id === caller.orgId));
  if (!visible) throw notFound('driver location');
  return view(location);
}

/**
 * The organisation whose key L2 reads: an OrgAdmin's or OrgTransporter's own (tenancy by the key: another
 * organisation's driver is not there); SysAdmin and a driver reading themself the driver's profile's (one consistent GetItem:
 * a driver's token may be older than its move into an organisation, and right after A25 the move must be seen). Undefined: nothing to read (404).
 */
async function organisationOf(caller: Caller, driverId: string): Promise<string | null | undefined> {
  if (isSysAdmin(caller) || caller.id === driverId) return currentOrganisation(driverId);
  return watchesOrganisation(caller) && caller.orgId !== null ? caller.orgId : undefined;
}

/** Who reads their organisation's drivers' locations: OrgAdmin, OrgTransporter, a partner with `locations:read`. */
const watchesOrganisation = (caller: Caller): boolean =>
  hasRole(caller, 'OrgAdmin', 'OrgTransporter') || hasScope(caller, 'locations:read');

/** One driver in a `driver.location` event (API.md 4.3). */
export interface LivePosition {
  user_id: string;
  latitude: number;
  longitude: number;
  altitude: number | null;
  client_time_utc: string;
  server_time: string;
  version: number;
}

/**
 * The stored location item (as a stream record's new image carries it) → its organisation and the event's view of
 * it; undefined for anything that is not a driver's current location (the cell directory). Extra attributes are
 * ignored; only the fields below are relied on.
 */
export function livePositionOf(
  item: Record<string, unknown>,
): { orgId: string | null; position: LivePosition } | undefined {
  if (typeof item['PK'] !== 'string' || typeof item['SK'] !== 'string') return undefined;
  const located = item['PK'].startsWith('LOCS#') || (item['PK'].startsWith('LOC#') && item['SK'] === 'CURRENT');
  if (!located) return undefined;
  const record = toRecord(item);
  if (typeof record.user_id !== 'string' || typeof record.latitude !== 'number') return undefined;
  return {
    orgId: typeof record.org_id === 'string' && record.org_id ? record.org_id : null,
    position: {
      user_id: record.user_id,
      latitude: record.latitude,
      longitude: record.longitude,
      altitude: record.altitude ?? null,
      client_time_utc: record.client_time_utc,
      server_time: record.server_time,
      version: Number(record.version),
    },
  };
}
