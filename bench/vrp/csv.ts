/**
 * A tasks file of 4.5 for route planning: every row with its coordinates (full precision) and service seconds, so a
 * benchmark or a test imports exactly the places and times it will check a build against.
 */
import type { Point } from './checker.ts';

/** One task of a routing CSV: instants in epoch milliseconds, loads in kg and m³. */
export interface RoutingRow {
  ref: string;
  from: Point;
  to: Point;
  fromOpenMs: number;
  fromCloseMs: number;
  toOpenMs: number;
  toCloseMs: number;
  fromServiceS: number;
  toServiceS: number;
  weightKg?: number;
  volumeM3?: number;
}

const HEADER = [
  'task_ref',
  'from_street_address',
  'from_city',
  'from_country',
  'to_street_address',
  'to_city',
  'to_country',
  'from_start_time_utc',
  'from_end_time_utc',
  'from_timezone',
  'to_start_time_utc',
  'to_end_time_utc',
  'to_timezone',
  'total_item_weight',
  'total_weight_unit',
  'total_item_volume',
  'total_volume_unit',
  'from_latitude',
  'from_longitude',
  'to_latitude',
  'to_longitude',
  'from_service_s',
  'to_service_s',
].join(',');

const iso = (ms: number) => new Date(ms).toISOString();

/** The tasks file of 4.5 with the optional coordinate and service columns; coordinates at full precision. */
export function routingCsv(rows: readonly RoutingRow[], timezone = 'UTC'): string {
  const lines = rows.map((row) =>
    [
      row.ref,
      `${row.ref} pickup`,
      'Bench City',
      'SG',
      `${row.ref} drop-off`,
      'Bench City',
      'SG',
      iso(row.fromOpenMs),
      iso(row.fromCloseMs),
      timezone,
      iso(row.toOpenMs),
      iso(row.toCloseMs),
      timezone,
      row.weightKg ?? '',
      row.weightKg === undefined ? '' : 'kg',
      row.volumeM3 ?? '',
      row.volumeM3 === undefined ? '' : 'm3',
      row.from.latitude,
      row.from.longitude,
      row.to.latitude,
      row.to.longitude,
      row.fromServiceS,
      row.toServiceS,
    ].join(','),
  );
  return [HEADER, ...lines].join('\n');
}
