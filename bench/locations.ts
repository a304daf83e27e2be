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
  const { importLocations, driversWithin, locationAt, nearestDriver } = await import('#shared/locations/locations');
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
}
