/**
 * 100 000 drivers over a 60 km × 60 km metro area in the local emulator; radius searches (200 m, 1 km, 5 km, 20 km)
 * and nearest searches: DynamoDB Query calls per search, items read per item returned, p50/p95 latency, beside a
 * brute force that scans the whole table.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { startBenchHost } from './host.ts';

const DRIVERS = 100_000;
const CENTRE = { latitude: 1.35, longitude: 103.82 };
const SPAN_DEG = 0.54; // about 60 km

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

let seed = 42;
const random = () => {
  seed = (seed * 1664525 + 1013904223) % 2 ** 32;
  return seed / 2 ** 32;
};
const inArea = (margin = 0) => ({
  latitude: CENTRE.latitude + (random() - 0.5) * SPAN_DEG * (1 - margin),
  longitude: CENTRE.longitude + (random() - 0.5) * SPAN_DEG * (1 - margin),
});

export async function benchLocations() {
  await startBenchHost('locations');
  const { importLocations, locationAt } = await import('#shared/locations/fixes');
  const { driversWithin } = await import('#shared/locations/search');
  const { nearestDriver } = await import('#shared/locations/nearest');
  const { distanceM } = await import('#shared/locations/geo');
  const { db, locationsTableName } = await import('#shared/db/client');
  const loadStarted = performance.now();
  const records = Array.from({ length: DRIVERS }, (_, i) =>
    locationAt(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, inArea()),
  );
  for (let i = 0; i < records.length; i += 10_000) await importLocations(records.slice(i, i + 10_000));
  console.log(
    `\n## Driver locations: ${DRIVERS} drivers over 60 km × 60 km (loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s)`,
  );
  console.log('search            runs  queries/search  items read/returned  returned (avg)   p50 ms   p95 ms');
  const admin = { kind: 'user' as const, id: 'bench', roles: ['SysAdmin' as const], orgId: null };
  const filters = { maxAgeS: 86_400 };

  for (const radius of [200, 1000, 5000, 20_000]) {
    const runs = radius >= 20_000 ? 15 : 40;
    const times: number[] = [];
    let queries = 0;
    let read = 0;
    let returned = 0;
    for (let i = 0; i < runs; i++) {
      const stats = { queries: 0, indexQueries: 0, itemsRead: 0 };
      const started = performance.now();
      const found = await driversWithin(admin, inArea(0.3), radius, filters, stats);
      times.push(performance.now() - started);
      queries += stats.queries;
      read += stats.itemsRead;
      returned += found.length;
    }
    console.log(
      `radius ${String(radius).padStart(6)} m   ${String(runs).padStart(4)}  ${(queries / runs).toFixed(1).padStart(14)}  ${(read / Math.max(1, returned)).toFixed(2).padStart(19)}  ${(returned / runs).toFixed(0).padStart(14)}  ${percentile(times, 50).toFixed(1).padStart(7)}  ${percentile(times, 95).toFixed(1).padStart(7)}`,
    );
  }

  const times: number[] = [];
  let queries = 0;
  let maxRead = 0;
  let read = 0;
  const runs = 60;
  for (let i = 0; i < runs; i++) {
    const stats = { queries: 0, indexQueries: 0, itemsRead: 0 };
    const started = performance.now();
    const found = await nearestDriver(admin, inArea(0.3), filters, stats);
    times.push(performance.now() - started);
    if (!found || (found.distance_m ?? 0) > 1000) throw new Error('expected a driver within 1 km at this density');
    queries += stats.queries;
    read += stats.itemsRead;
    maxRead = Math.max(maxRead, stats.itemsRead);
  }
  console.log(
    `nearest            ${String(runs).padStart(4)}  ${(queries / runs).toFixed(1).padStart(14)}  ${`${(read / runs).toFixed(1)} (max ${maxRead})`.padStart(19)}  ${'1'.padStart(14)}  ${percentile(times, 50).toFixed(1).padStart(7)}  ${percentile(times, 95).toFixed(1).padStart(7)}`,
  );

  // Brute force: read every location, measure every distance.
  const bruteTimes: number[] = [];
  let scanned = 0;
  let bruteFound = 0;
  for (let i = 0; i < 3; i++) {
    const centre = inArea(0.3);
    const started = performance.now();
    let cursor: Record<string, unknown> | undefined;
    let within = 0;
    do {
      const out = await db().send(
        new ScanCommand({
          TableName: locationsTableName(),
          ExclusiveStartKey: cursor,
          FilterExpression: 'entity = :l',
          ExpressionAttributeValues: { ':l': 'location' },
        }),
      );
      scanned += out.ScannedCount ?? 0;
      for (const item of out.Items ?? [])
        if (distanceM(centre, item as { latitude: number; longitude: number }) <= 1000) within++;
      cursor = out.LastEvaluatedKey;
    } while (cursor);
    bruteTimes.push(performance.now() - started);
    bruteFound += within;
  }
  console.log(
    `brute force 1 km      3  ${'1 scan'.padStart(14)}  ${`${(scanned / 3).toFixed(0)} per search`.padStart(19)}  ${(bruteFound / 3).toFixed(0).padStart(14)}  ${percentile(bruteTimes, 50).toFixed(1).padStart(7)}  ${Math.max(
      ...bruteTimes,
    )
      .toFixed(1)
      .padStart(7)}`,
  );
  console.log(
    '(items read/returned for nearest: items read per search; the budget is 3 for radii ≥ 1 km and 50 for nearest)',
  );
  await benchPolarLocations();
}

/**
 * Issue 33 item 4: near the poles a precision-5 cell is a sliver (0.9 km wide at 79.5°), and a 50 km circle there
 * made 3 899 index Queries (1 950 RCU, 5 s for an empty answer). A fleet of 2 000 drivers spread over 79–80° across
 * the antimeridian, and 50 km searches at 79.5° (empty and not), beside the pole itself: Queries, RCU and time.
 */
export async function benchPolarLocations() {
  await startBenchHost('locations');
  const { importLocations, locationAt } = await import('#shared/locations/fixes');
  const { driversWithin } = await import('#shared/locations/search');
  const { nearestDriver } = await import('#shared/locations/nearest');
  const { withCapacity } = await import('#shared/db/capacity');
  const fleet = Array.from({ length: 2000 }, (_, i) =>
    locationAt(`00000000-0000-4000-9000-${String(i).padStart(12, '0')}`, {
      latitude: 79 + random(),
      longitude: ((((180 + (random() - 0.5) * 20 + 180) % 360) + 360) % 360) - 180,
    }),
  );
  await importLocations(fleet);
  console.log(
    '\n## Driver locations near the poles: 2 000 drivers over 79–80° × 20° of longitude across the antimeridian',
  );
  console.log(
    'search                         runs  index Queries  calls   RCU/search  returned (avg)   p50 ms   p95 ms',
  );
  const admin = { kind: 'user' as const, id: 'bench', roles: ['SysAdmin' as const], orgId: null };
  const filters = { maxAgeS: 86_400 };
  const cases: { label: string; point: { latitude: number; longitude: number }; radius?: number }[] = [
    { label: 'radius 50 km at 79.5°, fleet', point: { latitude: 79.5, longitude: 179.9 }, radius: 50_000 },
    { label: 'radius 50 km at 79.5°, empty', point: { latitude: 79.5, longitude: 60 }, radius: 50_000 },
    { label: 'radius 50 km at 89.9°', point: { latitude: 89.9, longitude: 0 }, radius: 50_000 },
    { label: 'radius 50 km at 90°', point: { latitude: 90, longitude: 0 }, radius: 50_000 },
    { label: 'nearest at 79.5°, fleet', point: { latitude: 79.5, longitude: 179.9 } },
    { label: 'nearest at 79.5°, 40° away', point: { latitude: 79.5, longitude: 140 } },
    { label: 'nearest at 90°', point: { latitude: 90, longitude: 0 } },
  ];
  for (const { label, point, radius } of cases) {
    const runs = 10;
    const times: number[] = [];
    let indexQueries = 0;
    let calls = 0;
    let rcu = 0;
    let returned = 0;
    for (let i = 0; i < runs; i++) {
      const stats = { queries: 0, indexQueries: 0, itemsRead: 0 };
      const started = performance.now();
      const { result, tally } = await withCapacity(async () =>
        radius === undefined
          ? [await nearestDriver(admin, point, filters, stats)].filter((found) => found !== undefined)
          : await driversWithin(admin, point, radius, filters, stats),
      );
      times.push(performance.now() - started);
      indexQueries += stats.indexQueries;
      calls += tally.calls;
      rcu += tally.rcu;
      returned += result.length;
    }
    console.log(
      `${label.padEnd(30)} ${String(runs).padStart(4)}  ${(indexQueries / runs).toFixed(0).padStart(13)}  ${(calls / runs).toFixed(0).padStart(5)}  ${(rcu / runs).toFixed(1).padStart(11)}  ${(returned / runs).toFixed(0).padStart(14)}  ${percentile(times, 50).toFixed(1).padStart(7)}  ${percentile(times, 95).toFixed(1).padStart(7)}`,
    );
  }
  console.log(
    '(index Queries: the geo index Queries of a search, at most 100 (API.md 4.9); before issue 33: 3 899 at 79.5°)',
  );
}
