/**
 * A tasks file of 4.5 for route planning: every row with its coordinates (full precision) and service seconds, so a
 * benchmark or a test imports exactly the places and times it will check a build against.
 */
import { TASK_REQUIRED } from '#shared/imports/csv-rows';
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
  ...TASK_REQUIRED,
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
  const columns = HEADER.split(',');
  const lines = rows.map((row) => {
    const values: Record<string, string | number> = {
      task_ref: row.ref,
      from_street_address: `${row.ref} pickup`,
      from_city: 'Bench City',
      from_country: 'SG',
      to_street_address: `${row.ref} drop-off`,
      to_city: 'Bench City',
      to_country: 'SG',
      from_start_time_utc: iso(row.fromOpenMs),
      from_end_time_utc: iso(row.fromCloseMs),
      from_timezone: timezone,
      to_start_time_utc: iso(row.toOpenMs),
      to_end_time_utc: iso(row.toCloseMs),
      to_timezone: timezone,
      ...(row.weightKg === undefined ? {} : { total_item_weight: row.weightKg, total_weight_unit: 'kg' }),
      ...(row.volumeM3 === undefined ? {} : { total_item_volume: row.volumeM3, total_volume_unit: 'm3' }),
      from_latitude: row.from.latitude,
      from_longitude: row.from.longitude,
      to_latitude: row.to.latitude,
      to_longitude: row.to.longitude,
      from_service_s: row.fromServiceS,
      to_service_s: row.toServiceS,
    };
    return columns.map((column) => values[column] ?? '').join(',');
  });
  return [HEADER, ...lines].join('\n');
}
