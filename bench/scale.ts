/**
 * Scale on paper: the reference fleet with 5 000 drivers inside one precision-5 cell (about 4.9 km × 4.9 km), each
 * sending a fix every 10 s; the geo index's partition key holding them is the precision-4 cell around that cell
 * (`indexPartitionOf` in shared/locations/geo.ts). For every partition key that load concentrates on: its write and
 * read rate against DynamoDB's per-partition limits (1 000 WCU/s, 3 000 RCU/s), and, where the design shards it, the
 * sharded figure. `npm run scale` prints docs/scale.md's table; a test keeps the document equal to it.
 */
import { GEO_SHARDS, GEO_TIME_GRANULARITY_S } from '#shared/locations/locations';

export const LIMITS = { wcu: 1000, rcu: 3000 } as const;

export const SCENARIO = {
  driversInCell: 5_000,
  fixIntervalS: 10,
  /** At city speed a driver leaves a 4.9 km cell about every 10 minutes. */
  crossingIntervalS: 600,
  /**
   * … and its precision-6 cell (the geo index's sort key, 1.2 km × 0.6 km; issue 27) about every 2 minutes:
   * test/e2e/capacity.test.ts's 30-minute route at 6 m/s leaves 15.
   */
  cellMoveIntervalS: 120,
  /** Dispatchers searching the cell: each runs an L4 of 1 km a minute. */
  searchingDispatchers: 200,
  searchesPerDispatcherPerS: 1 / 60,
  /** Share of the cell's drivers a 1 km circle covers (π km² of ~24 km²), and the bytes of one index entry. */
  circleShare: Math.PI / 24,
  indexEntryBytes: 250,
  /** Organisations with drivers in the cell: each stream batch (a second) costs one subscriber Query per organisation. */
  organisations: 50,
  /**
   * Drivers of the largest organisation, wherever they are: its drivers' location items share one partition key
   * (`LOCS#<org>`, so that its live positions ride one stream shard), which takes every one of their fixes.
   */
  driversInLargestOrganisation: 2_000,
} as const;

export interface Row {
  partition: string;
  what: string;
  wcu: number;
  rcu: number;
  /** The same partition with the design's sharding, when it shards. */
  sharded?: { wcu: number; rcu: number; how: string };
}

export function scaleRows(scenario = SCENARIO, shards = GEO_SHARDS): Row[] {
  const fixesPerS = scenario.driversInCell / scenario.fixIntervalS;
  const crossingsPerS = scenario.driversInCell / scenario.crossingIntervalS;
  const searchesPerS = scenario.searchingDispatchers * scenario.searchesPerDispatcherPerS;
  // Eventually consistent Query: 0.5 RCU per 4 KB read.
  const searchRcu = ((scenario.driversInCell * scenario.circleShare * scenario.indexEntryBytes) / 4096) * 0.5;
  // A fix rewrites its driver's entry only when it leaves its precision-6 cell (a delete and a put, 2 WCU) or its
  // granule turns (an update in place, 1 WCU): no more than a move at every fix, however often drivers send them.
  const indexWcu = Math.min(
    fixesPerS * 2,
    (scenario.driversInCell / scenario.cellMoveIntervalS) * 2 + scenario.driversInCell / GEO_TIME_GRANULARITY_S,
  );
  const indexRcu = searchesPerS * searchRcu;
  return [
    {
      partition: 'Locations `LOCS#<org>` (a freelance driver: `LOC#<driver>`)',
      what: `the items of the largest organisation’s ${scenario.driversInLargestOrganisation} drivers (anywhere): a conditional UpdateItem per fix (1 WCU)`,
      wcu: scenario.driversInLargestOrganisation / scenario.fixIntervalS,
      rcu: 0,
    },
    {
      partition: 'Geo index `<partition>`, the precision-4 cell holding the crowded one (unsharded)',
      what: `a fix moves its entry on leaving its precision-6 cell (2 WCU, every ~${scenario.cellMoveIntervalS / 60} min), rewrites it when its ${GEO_TIME_GRANULARITY_S} s granule turns (1 WCU); L3/L4 searches read it`,
      wcu: indexWcu,
      rcu: indexRcu,
      sharded: {
        wcu: indexWcu / shards,
        rcu: indexRcu / shards,
        how: `\`<partition>#<shard>\`, ${shards} shards by a hash of the driver id; a search reads every shard`,
      },
    },
    {
      partition: 'Locations `CELLS#ALL#<p3>`',
      what: 'the precision-5 counts under one precision-3 cell: a crossing moves one down and one up (1 WCU each)',
      wcu: crossingsPerS * 2,
      rcu: searchesPerS * 0.5,
    },
    {
      partition: 'Locations `CELLS#TOP#<n>` (4 shards by cell; `CELLS#ALL` before issue 45)',
      what: 'the precision-3 counts: only a crossing into another precision-3 cell (~156 km) touches them',
      wcu: crossingsPerS * 0.05 * 2,
      rcu: searchesPerS * 0.5,
    },
    {
      partition: 'Main `USER#<driver>`',
      what: 'the handler kit’s token-generation read, cache cold (0.5 RCU a request)',
      wcu: 0,
      rcu: 0.5 / scenario.fixIntervalS,
    },
    {
      partition: 'Connections `CHAN#org.<id>`',
      what: 'one subscriber Query per organisation per stream batch (a second)',
      wcu: 0,
      rcu: 0.5,
    },
  ];
}

const num = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(3));
const pct = (n: number, limit: number) => `${((n / limit) * 100).toFixed(n / limit < 0.01 ? 2 : 0)} %`;

export function scaleTable(rows = scaleRows()): string {
  const lines = [
    '| partition key | what loads it | WCU/s | of 1 000 | RCU/s | of 3 000 | sharded | sharded WCU/s | of 1 000 |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.partition} | ${row.what} | ${num(row.wcu)} | ${pct(row.wcu, LIMITS.wcu)} | ${num(row.rcu)} | ${pct(row.rcu, LIMITS.rcu)} | ${row.sharded?.how ?? '—'} | ${row.sharded ? num(row.sharded.wcu) : '—'} | ${row.sharded ? pct(row.sharded.wcu, LIMITS.wcu) : '—'} |`,
    );
  }
  return lines.join('\n');
}

export function benchScale() {
  console.log(
    `\n## Scale on paper: ${SCENARIO.driversInCell} drivers in one precision-5 cell, a fix every ${SCENARIO.fixIntervalS} s (docs/scale.md)`,
  );
  console.log(scaleTable());
}

if (process.argv[1]?.endsWith('scale.ts')) benchScale();
