/**
 * A driver's fixes (L2, X13): each is one conditional UpdateItem of the driver's location item (shared/locations/
 * locations.ts), ignored when older than the stored one, its client time trusted within MAX_CLOCK_SKEW_MS of the
 * server's; a first fix, or one that crosses into another precision-5 cell, also moves the cell directory's counts (up
 * before the move, down after it). Also the bulk loads of benches and tests (`locationAt`, `importLocations`,
 * `storeFixes`).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { getUser } from '#shared/accounts/users';
import type { Caller } from '#shared/auth/caller';
import { clock, toUtcIso } from '#shared/clock';
import { putAll } from '#shared/db/batch';
import { db, isConditionalFailure, locationsTableName, OldImageLostError, transactWrite } from '#shared/db/client';
import { invalidAt, notFound } from '#shared/errors';
import { newObjectId } from '#shared/ids';
import { directoryCellOf, type Point } from '#shared/locations/geo';
import {
  adjustDirectory,
  currentOrganisation,
  directoryEntries,
  geoKeys,
  geoTimeOf,
  inParallel,
  type LocationRecord,
  locationItem,
  locationKey,
  organisationMove,
  releaseDirectory,
  toRecord,
} from '#shared/locations/locations';

export interface Fix {
  device_id?: string | null | undefined;
  latitude: number;
  longitude: number;
  altitude?: number | null | undefined;
  client_time_utc: string;
  client_timezone?: string | null | undefined;
}

/** How far ahead of the server a device clock may be before a fix is refused. */
const MAX_CLOCK_SKEW_MS = 10 * 60 * 1000;

type Fields = Omit<LocationRecord, 'user_id' | 'version' | 'org_id' | 'service_types'>;

/** What a conditional UpdateItem found instead, when its condition failed (undefined: no location yet). */
function conditionFailureItem(error: unknown): LocationRecord | undefined {
  const item = (error as { Item?: Record<string, unknown> }).Item;
  if (!item) return undefined;
  // The exception carries the item as DynamoDB sent it; the document client does not translate errors.
  const plain =
    typeof item['PK'] === 'object'
      ? unmarshall(item as Record<string, AttributeValue>)
      : (item as Record<string, unknown>);
  return toRecord(plain);
}

/**
 * Stores a newer fix of a driver whose location is in `expectedCell`: one UpdateItem, its condition the ordering rule.
 * The server time of the fix it replaced once stored, or what is stored instead (undefined: no location yet).
 */
async function moveIfNewer(
  driverId: string,
  orgId: string | null,
  fields: Fields,
  point: Point,
  expectedCell: string,
): Promise<{ previousServerTime: string | undefined } | LocationRecord | undefined> {
  const values: Record<string, unknown> = {
    ...fields,
    ...geoKeys(driverId, point),
    geo_time: geoTimeOf(fields.server_time),
  };
  const names = Object.keys(values);
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: locationsTableName(),
        Key: locationKey(driverId, orgId),
        UpdateExpression: `SET ${names.map((name) => `#${name} = :${name}`).join(', ')} ADD #version :one`,
        ConditionExpression: 'attribute_exists(PK) AND #client_time_utc < :client_time_utc AND #cell = :expected',
        ExpressionAttributeNames: Object.fromEntries([...names, 'version'].map((name) => [`#${name}`, name])),
        ExpressionAttributeValues: {
          ...Object.fromEntries(names.map((name) => [`:${name}`, values[name]])),
          ':one': 1,
          ':expected': expectedCell,
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        // The replaced fix's time (free: a write's return values cost no read unit): the risk check's due mark.
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    return { previousServerTime: out.Attributes?.['server_time'] as string | undefined };
  } catch (error) {
    // Stored, its answer lost: the replaced fix's time with it. The risk check after the fix then waits for the
    // minute's sweep (planning/late-risk.ts), which checks every runsheet under way anyway.
    if (error instanceof OldImageLostError) return { previousServerTime: undefined };
    if (!isConditionalFailure(error)) throw error;
    return conditionFailureItem(error);
  }
}

/** A fix's client time as stored (UTC ISO), refused at `path` when it is too far ahead of the server's clock. */
function clientTimeOf(fix: Fix, path: string): string {
  const clientTime = toUtcIso(fix.client_time_utc);
  if (Date.parse(clientTime) > clock.nowMs() + MAX_CLOCK_SKEW_MS) {
    throw invalidAt(path, 'is more than 10 minutes ahead of the server clock');
  }
  return clientTime;
}

/**
 * X13: a phone's buffer of fixes. Every fix is checked first (one bad fix refuses the batch at its path and stores
 * nothing); then only the newest is offered to L1's write, so a batch costs what one fix costs. `accepted` is 1 when
 * that fix was stored (0 when the stored fix is as new or newer); every other fix is `ignored`.
 */
export async function recordFixes(
  caller: Caller,
  fixes: Fix[],
): Promise<{ accepted: number; ignored: number; stored: StoredFix | undefined }> {
  let newest: { fix: Fix; at: number } | undefined;
  fixes.forEach((fix, i) => {
    const at = Date.parse(clientTimeOf(fix, `fixes[${i}].client_time_utc`));
    // Equal client times: the later one in the buffer wins (a phone appends in the order it took them).
    if (!newest || at >= newest.at) newest = { fix, at };
  });
  if (!newest) return { accepted: 0, ignored: 0, stored: undefined };
  const stored = await storeFix(caller, newest.fix);
  const accepted = stored ? 1 : 0;
  return { accepted, ignored: fixes.length - accepted, stored };
}

/**
 * A fix the service stored: whose, where and when (its `server_time`), and the server time of the fix it replaced
 * (undefined for a driver's first): what the risk check after it (planning/late-risk.ts) needs, without a read.
 */
export interface StoredFix {
  driverId: string;
  fix: Point & { server_time: string };
  previousServerTime: string | undefined;
}

/**
 * L1. Returns whether the fix was stored (false: it was not newer than the stored one, and is ignored).
 *
 * The item is keyed by the driver's organisation. The write goes first under the token's (the steady state: one
 * UpdateItem); the token may be older than the driver's move into an organisation (A25), and then no item is there:
 * the first-fix path reads the driver's profile, and when its organisation is not the token's the write goes again
 * under the profile's, never a new item under the token's. A25 moves the item and changes the profile in one
 * transaction, so the profile and the item's key never disagree: a stale token cannot bring the item back under the
 * organisation it was moved out of.
 */
export async function recordFix(caller: Caller, fix: Fix): Promise<boolean> {
  return (await storeFix(caller, fix)) !== undefined;
}

/** L1 as `recordFix`, answering the fix stored (undefined: ignored, not newer than the stored one). */
export async function storeFix(caller: Caller, fix: Fix): Promise<StoredFix | undefined> {
  const clientTime = clientTimeOf(fix, 'client_time_utc');
  const point = { latitude: fix.latitude, longitude: fix.longitude };
  const cell = directoryCellOf(point);
  const fields: Fields = {
    id: newObjectId(),
    device_id: fix.device_id ?? null,
    latitude: fix.latitude,
    longitude: fix.longitude,
    altitude: fix.altitude ?? null,
    client_time_utc: clientTime,
    client_timezone: fix.client_timezone ?? null,
    server_time: clock.nowIso(),
  };
  const storedFix = { driverId: caller.id, fix: { ...point, server_time: fields.server_time } };
  let expectedCell = cell;
  let orgId = caller.orgId;
  for (let attempt = 0; attempt < 4; attempt++) {
    // The steady state: a newer fix within the stored partition cell.
    const found = await moveIfNewer(caller.id, orgId, fields, point, expectedCell);
    if (found && 'previousServerTime' in found) {
      if (expectedCell !== cell) await releaseDirectory(leaving(expectedCell, cell));
      return { ...storedFix, previousServerTime: found.previousServerTime };
    }
    if (expectedCell !== cell) await releaseDirectory(leaving(cell, expectedCell)); // the crossing lost a race
    if (!found) {
      const first = await storeFirstFix(caller.id, orgId, fields, point);
      if (first === 'stored') return { ...storedFix, previousServerTime: undefined };
      // The driver's organisation is not the token's (a token minted before A25): its item is under the profile's.
      if (first !== 'lost') orgId = first.orgId;
      continue;
    }
    if (Date.parse(found.client_time_utc) >= Date.parse(clientTime)) return undefined;
    // A crossing into another partition cell: count the driver in the new cells first, then move.
    const stored = directoryCellOf(found);
    await adjustDirectory(leaving(cell, stored), +1);
    expectedCell = stored;
  }
  return undefined;
}

/** The directory entries of `from` that `to` does not share. */
function leaving(from: string, to: string): string[] {
  const kept = new Set(directoryEntries(to));
  return directoryEntries(from).filter((entry) => !kept.has(entry));
}

/**
 * A driver's first fix: the organisation and service types come from the user, once. 'lost': another one won; the
 * organisation when it is not `orgId`, the one the caller looked under (nothing is written then).
 */
async function storeFirstFix(
  driverId: string,
  orgId: string | null,
  fields: Fields,
  point: Point,
): Promise<'stored' | 'lost' | { orgId: string | null }> {
  // A consistent read: an A25 that moved the item has committed by the time the caller's write found nothing, and its
  // new organisation must be the one read here (an eventually consistent read could still answer the old one).
  const driver = await getUser(driverId, { consistent: true });
  if (!driver || driver.deleted_at) throw notFound('driver');
  if ((driver.org_id ?? null) !== orgId) return { orgId: driver.org_id ?? null };
  const location: LocationRecord = {
    ...fields,
    user_id: driverId,
    version: 1,
    org_id: driver.org_id,
    service_types: driver.driver_profile?.service_types ?? [],
  };
  const entries = directoryEntries(directoryCellOf(point));
  await adjustDirectory(entries, +1);
  try {
    await db().send(
      new PutCommand({
        TableName: locationsTableName(),
        Item: {
          ...locationKey(driverId, location.org_id),
          ...geoKeys(driverId, point),
          geo_time: geoTimeOf(fields.server_time),
          entity: 'location',
          ...location,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    await releaseDirectory(entries);
    return 'lost';
  }
  // An A25 that committed between the read above and the put found no item to move (its check passed before the put),
  // so the item would stay under a key the profile no longer names, its organisation blind to the driver. Read the
  // profile again: if it moved on, move the item as A25 would have (an A25 that did see the item has moved it, and
  // this move then finds nothing and stops).
  const after = await currentOrganisation(driverId);
  if (after !== undefined && after !== null && after !== location.org_id) {
    try {
      await transactWrite(await organisationMove(driverId, location.org_id, after, undefined));
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
  }
  return 'stored';
}

/** Whole location items, 25 a BatchWriteItem, 8 calls in flight (shared/db/batch.ts). */
const putInBatches = (items: Record<string, unknown>[]) => putAll(locationsTableName(), items, 8);

/** A driver's location as `importLocations` stores it: a fix at `point` received now (bulk loads, benches, tests). */
export function locationAt(userId: string, point: Point, orgId: string | null = null): LocationRecord {
  const now = clock.nowIso();
  return {
    id: newObjectId(),
    user_id: userId,
    device_id: null,
    latitude: point.latitude,
    longitude: point.longitude,
    altitude: null,
    client_time_utc: now,
    client_timezone: null,
    server_time: now,
    version: 1,
    org_id: orgId,
    service_types: [],
  };
}

/**
 * Loads many fixes at once (benchmarks, property tests, imports from another system): the same items and
 * directory counts as L1 writes, in batches. Each driver must appear once and must not have a location yet.
 */
export async function importLocations(locations: LocationRecord[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const location of locations) {
    for (const entry of directoryEntries(directoryCellOf(location))) counts.set(entry, (counts.get(entry) ?? 0) + 1);
  }
  await putInBatches(locations.map(locationItem));
  await inParallel(
    [...counts].map(([entry, n]) => async () => {
      const [PK, SK] = entry.split('|') as [string, string];
      await db().send(
        new UpdateCommand({
          TableName: locationsTableName(),
          Key: { PK, SK },
          UpdateExpression: 'ADD n :n',
          ExpressionAttributeValues: { ':n': n },
        }),
      );
    }),
    8,
  );
}

/**
 * Stores newer fixes of drivers that already have a location, in batches, without L1's conditions: the live
 * positions benchmark's load (1 000 drivers a second). The directory is left as it is, so each fix must stay in its
 * driver's precision-5 partition.
 */
export async function storeFixes(locations: LocationRecord[]): Promise<void> {
  await putInBatches(locations.map(locationItem));
}
