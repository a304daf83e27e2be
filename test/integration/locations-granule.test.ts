/**
 * L3 and L4 choose candidates from the Geo index, which knows a driver's position to its precision-6 cell and its fix
 * time to GEO_TIME_GRANULARITY_S (issue 27.2), then answer from the candidates' items. These cases are the ones where
 * the index's knowledge and the item disagree at the edges; the property test (locations-property.test.ts) covers
 * random searches.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { importLocations } = await import('../../shared/locations/fixes.ts');
const { driversWithin } = await import('../../shared/locations/search.ts');
const { nearestDriver } = await import('../../shared/locations/nearest.ts');
const { GEO_TIME_GRANULARITY_S } = await import('../../shared/locations/locations.ts');
const { setClock, resetClock } = await import('../../shared/clock.ts');
const { distanceM } = await import('../../shared/locations/geo.ts');
type LocationRecord = Parameters<typeof importLocations>[0][number];

const G = GEO_TIME_GRANULARITY_S * 1000;
const ORG = '0c0c0c0c-0000-4000-8000-00000000000c';
const dispatcher = { kind: 'user' as const, id: 'granule-admin', roles: ['OrgAdmin' as const], orgId: ORG };

const record = (userId: string, point: { latitude: number; longitude: number }, serverMs: number): LocationRecord => ({
  id: `${userId.padEnd(24, '0')}`.slice(0, 24),
  user_id: userId,
  device_id: null,
  latitude: point.latitude,
  longitude: point.longitude,
  altitude: null,
  client_time_utc: new Date(serverMs - 1000).toISOString(),
  client_timezone: null,
  server_time: new Date(serverMs).toISOString(),
  version: 1,
  org_id: ORG,
  service_types: [],
});

afterEach(() => resetClock());

describe('L3 when the candidate that bounded the search turns out too old', () => {
  it('still answers the nearest matching driver, not merely the nearest of the first candidates', async () => {
    // Precision-6 cells near Singapore (issue 27; each driver in a cell of its own). The search point is the centre
    // of w21zdf, where X is: X's cell bounds the nearest to 685 m (its farthest corner). V's cell (w21ze4, east) starts
    // at 608 m (V is at 1 801 m), N's (w21zdu, two cells north) at 915 m (N is at 934 m). X's fix is older than
    // max_age_s, but its geo_time is within a granule of it.
    const point = { latitude: 1.3321, longitude: 103.8373 };
    const X = { latitude: 1.3325, longitude: 103.837 };
    const V = { latitude: 1.3321, longitude: 103.8535 };
    const N = { latitude: 1.3405, longitude: 103.8375 };
    expect(distanceM(point, N)).toBeLessThan(distanceM(point, V));
    expect(distanceM(point, X)).toBeLessThan(distanceM(point, N));
    const maxAgeS = 120;
    // X's fix a second into a granule; the search 125 s later: X is 125 s old, its geo_time 126 s, so its least
    // possible age (126 s − G, below 120 s) keeps it a candidate.
    const xMs = Math.ceil(Date.now() / G) * G + 1000;
    const now = xMs + (maxAgeS + 5) * 1000;
    const suffix = String(xMs).slice(-6);
    await importLocations([
      record(`granule-x-${suffix}`, X, xMs),
      record(`granule-v-${suffix}`, V, now - 10_000),
      record(`granule-n-${suffix}`, N, now - 10_000),
    ]);
    setClock(() => now);
    const nearest = await nearestDriver(dispatcher, point, { maxAgeS });
    expect(nearest?.user_id).toBe(`granule-n-${suffix}`);
    // L4 agrees: within 2 km, N then V; X is too old.
    const within = await driversWithin(dispatcher, point, 2000, { maxAgeS });
    expect(within.map((l) => l.user_id)).toEqual([`granule-n-${suffix}`, `granule-v-${suffix}`]);
    // With a max_age_s that admits X, X is the nearest.
    expect((await nearestDriver(dispatcher, point, { maxAgeS: maxAgeS + 10 }))?.user_id).toBe(`granule-x-${suffix}`);
  });
});

describe('an index entry written before issue 27 (a precision-9 sort key)', () => {
  it('is found by L3 and L4 as a new one is: its precision-6 cell is its first six characters', async () => {
    const { db, locationsTableName } = await import('../../shared/db/client.ts');
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { encode } = await import('../../shared/locations/geo.ts');
    const org = '0c0c0c0c-0000-4000-8000-00000000032c';
    const scoped = { ...dispatcher, orgId: org };
    const now = Date.now();
    const suffix = String(now).slice(-6);
    const old = { latitude: -1.2921, longitude: 36.8219 };
    const fresh = { latitude: -1.2978, longitude: 36.8301 };
    await importLocations([
      { ...record(`geo9-old-${suffix}`, old, now), org_id: org },
      { ...record(`geo9-new-${suffix}`, fresh, now), org_id: org },
    ]);
    // The old driver's entry as the service wrote it before: `<precision-9 geohash>#<driver>`.
    await db().send(
      new UpdateCommand({
        TableName: locationsTableName(),
        Key: { PK: `LOC#geo9-old-${suffix}`, SK: 'CURRENT' },
        UpdateExpression: 'SET GEO_SK = :sk',
        ExpressionAttributeValues: { ':sk': `${encode(old, 9)}#geo9-old-${suffix}` },
      }),
    );
    setClock(() => now + 1000);
    expect((await nearestDriver(scoped, old, { maxAgeS: 60 }))?.user_id).toBe(`geo9-old-${suffix}`);
    expect((await nearestDriver(scoped, { latitude: -1.2925, longitude: 36.8222 }, { maxAgeS: 60 }))?.user_id).toBe(
      `geo9-old-${suffix}`,
    );
    // A radius small enough for a plan of precision-6 cells (a `begins_with` of the old sort key), and a large one.
    for (const radius of [300, 1500, 20_000]) {
      const within = await driversWithin(scoped, old, radius, { maxAgeS: 60 });
      const expected = [`geo9-old-${suffix}`, `geo9-new-${suffix}`].filter(
        (_, i) => distanceM(old, i === 0 ? old : fresh) <= radius,
      );
      expect(
        within.map((l) => l.user_id),
        String(radius),
      ).toEqual(expected);
    }
  });
});

describe('L3 in a crowded precision-6 cell (issue 27)', () => {
  it('reads the items of the candidates nearest first, and stops once none left can be nearer', async () => {
    const { cellBox, encode, neighbours } = await import('../../shared/locations/geo.ts');
    const org = crypto.randomUUID();
    const scoped = { ...dispatcher, orgId: org };
    // A cell of the Sahara chosen at random (no other test's drivers), its centre the search point.
    const cell = encode({ latitude: 20 + Math.random() * 5, longitude: 5 + Math.random() * 10 }, 6);
    const box = cellBox(cell);
    const point = { latitude: (box.minLat + box.maxLat) / 2, longitude: (box.minLon + box.maxLon) / 2 };
    const now = Date.now();
    let n = 0;
    const spread = (hash: string, count: number) => {
      const b = cellBox(hash);
      return Array.from({ length: count }, (_, i) => {
        const at = {
          latitude: b.minLat + ((b.maxLat - b.minLat) * (0.05 + 0.9 * ((i * 7919) % 101))) / 101,
          longitude: b.minLon + ((b.maxLon - b.minLon) * (0.05 + 0.9 * ((i * 104_729) % 103))) / 103,
        };
        return { ...record(`crowd-${org.slice(0, 8)}-${n++}`, at, now), org_id: org };
      });
    };
    // 120 drivers in the point's cell and 120 in each of its eight neighbours: every neighbour's least distance (at
    // most its corner shared with the point's cell) is within the point's cell's farthest corner (the half diagonal,
    // ~650 m here), so all 1 080 are candidates.
    const drivers = [spread(cell, 120), ...neighbours(cell).map((hash) => spread(hash, 120))].flat();
    await importLocations(drivers);
    setClock(() => now + 1000);
    const stats = { queries: 0, indexQueries: 0, itemsRead: 0 };
    const nearest = await nearestDriver(scoped, point, { maxAgeS: 60 }, stats);
    const brute = drivers
      .map((d) => ({ id: d.user_id, distance: distanceM(point, d) }))
      .sort((a, b) => a.distance - b.distance || a.id.localeCompare(b.id))[0]!;
    expect(nearest?.user_id).toBe(brute.id);
    // The index entries read (the point's cell and its neighbours: 1 080, and a directory entry or two) and the
    // items of the point's cell alone (120, least distance 0): not the 1 080 items of every candidate.
    expect(stats.itemsRead).toBeGreaterThanOrEqual(1080 + 120);
    expect(stats.itemsRead).toBeLessThan(1080 + 120 + 10);
    // And from anywhere around (the crowded partition's search starts from precision-6 cells around the point), the
    // answer is brute force's: 20 points spread over the nine cells (and a little beyond).
    for (let i = 0; i < 20; i++) {
      const at = {
        latitude: point.latitude + (box.maxLat - box.minLat) * (1.6 - (3.2 * ((i * 37) % 20)) / 19),
        longitude: point.longitude + (box.maxLon - box.minLon) * (1.6 - (3.2 * ((i * 53) % 20)) / 19),
      };
      const expected = drivers
        .map((d) => ({ id: d.user_id, distance: distanceM(at, d) }))
        .sort((a, b) => a.distance - b.distance || a.id.localeCompare(b.id))[0]!;
      expect((await nearestDriver(scoped, at, { maxAgeS: 60 }))?.user_id, JSON.stringify(at)).toBe(expected.id);
    }
  });
});
