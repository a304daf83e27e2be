/**
 * The rows of contract 4.5's two formats: their columns (required, known), how a header tells a tasks file from an
 * items file, and each row's checks. A rejected row becomes one `row <n> (task_ref <ref>): <field>: <reason>; …`
 * string naming every problem of the row (RowProblems, rowError); the checks' memos are bounded, since a worker
 * serves every tenant's files.
 */
import { isStorableNumber, UNSTORABLE_NUMBER } from '#shared/db/numbers';
import { cutText, MAX_REF_CHARS } from '#shared/imports/result-bounds';

export const TASK_REQUIRED = [
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
] as const;
export const ITEM_REQUIRED = ['task_ref', 'description', 'quantity'] as const;

export type FileKind = 'tasks' | 'items';

/** Tells a tasks file from an items file by its header row. */
export function kindOfHeader(header: string[]): FileKind | undefined {
  const names = new Set(header.map((h) => h.trim().toLowerCase()));
  if (names.has('from_street_address')) return 'tasks';
  if (names.has('quantity')) return 'items';
  return undefined;
}

export type Row = Record<string, string>;

export interface Address {
  building_name: string | null;
  street_address: string;
  city: string;
  state: string | null;
  country: string;
  zip_code: string | null;
  latitude?: number;
  longitude?: number;
}

export interface TaskRow {
  task_ref: string;
  from_address: Address;
  to_address: Address;
  from_time_window: { start_time_utc: string; end_time_utc: string; start_timezone: string; end_timezone: string };
  to_time_window: { start_time_utc: string; end_time_utc: string; start_timezone: string; end_timezone: string };
  total_item_weight: number | null;
  total_weight_unit: string | null;
  total_item_volume: number | null;
  total_volume_unit: string | null;
  notes: string | null;
  /** The time a stop takes, in whole seconds (0–7 200), for route planning (4.10); null: the build's default. */
  from_service_s: number | null;
  to_service_s: number | null;
}

export interface ItemRow {
  task_ref: string;
  sku: string | null;
  description: string;
  quantity: number;
  weight: number | null;
  weight_unit: string | null;
  volume: number | null;
  volume_unit: string | null;
}

class RowProblem extends Error {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(reason);
  }
}

/** Every problem of a row, `<field>: <reason>` each, thrown by parseTask and parseItem when a row has any. */
export class RowProblems extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'RowProblems';
  }
}

/** Runs each field's check, collecting problems instead of stopping at the first, so one row reports them all. */
class Checks {
  readonly problems: string[] = [];

  field<T>(check: () => T): T | undefined {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof RowProblem)) throw error;
      this.problems.push(`${error.field}: ${error.message}`);
      return undefined;
    }
  }

  done<T>(value: T): T {
    if (this.problems.length > 0) throw new RowProblems(this.problems);
    return value;
  }
}

/**
 * `row <n> (task_ref <ref>): <problem>; <problem>`, `n` the row as a spreadsheet shows it (the header is row 1; the
 * runner puts the file's name before it), or `(no task_ref)` for a row without one; the ref cut to 64
 * characters (a result shows at most 500 of the string: contract 4.9).
 */
export const rowError = (n: number, ref: string, problems: string[]) =>
  `row ${n} (${ref === '' ? 'no task_ref' : `task_ref ${cutText(ref, MAX_REF_CHARS)}`}): ${problems.join('; ')}`;

/**
 * A memo of a worker's whole life (a container serves every tenant's files, one after the other), so bounded:
 * at most `limit` entries, the least recently used going first. Only what was found valid is remembered (a finite set
 * in practice: a file's zones and time windows repeat from row to row); an invalid input is checked again each time
 * and never kept, so a file of all-different junk cannot grow it.
 */
class BoundedMemo<V> {
  private readonly entries = new Map<string, V>();

  constructor(readonly limit: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Most recently used last: Map keeps insertion order, so the first key is the one to drop.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.limit) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }
}

/** Spellings of valid zones (Intl takes any letter case, so there are more spellings than zones: hence the bound). */
const validZones = new BoundedMemo<true>(1_000);
/** Normalised date-times by their text: parsing and formatting a date is the dearest check of a row. */
const dateTimes = new BoundedMemo<string>(10_000);

/** How many entries the validator's memos hold now, and their bounds: for the test that junk cannot grow them. */
export const validatorMemoSizes = () => ({
  timeZones: { size: validZones.size, limit: validZones.limit },
  dateTimes: { size: dateTimes.size, limit: dateTimes.limit },
});

function isTimeZone(zone: string): boolean {
  if (validZones.get(zone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    return false;
  }
  if (!zone.includes('/') && zone !== 'UTC') return false;
  validZones.set(zone, true);
  return true;
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

function text(row: Row, field: string, required: boolean): string | null {
  const value = row[field]?.trim() ?? '';
  if (value === '') {
    if (required) throw new RowProblem(field, 'is required');
    return null;
  }
  if (value.length > 1000) throw new RowProblem(field, 'is longer than 1000 characters');
  return value;
}

function number(
  row: Row,
  field: string,
  options: { min?: number; max?: number; integer?: boolean; required?: boolean } = {},
) {
  const raw = text(row, field, options.required ?? false);
  if (raw === null) return null;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw))
    throw new RowProblem(
      field,
      `is not a number: ${JSON.stringify(raw.slice(0, 40))}${/^[+-]?\d+,\d+$/.test(raw) ? ' (write the decimal separator as a point)' : ''}`,
    );
  const value = Number(raw);
  if (options.integer && !Number.isInteger(value)) throw new RowProblem(field, 'must be a whole number');
  if (options.min !== undefined && value < options.min) throw new RowProblem(field, `must be at least ${options.min}`);
  if (options.max !== undefined && value > options.max) throw new RowProblem(field, `must be at most ${options.max}`);
  // Within the range yet not storable: 1e-200 is at least 0 (issue 51.5: it failed the whole import).
  if (!isStorableNumber(value)) throw new RowProblem(field, UNSTORABLE_NUMBER);
  return value;
}

function dateTime(row: Row, field: string): string {
  const raw = text(row, field, true)!;
  const known = dateTimes.get(raw);
  if (known !== undefined) return known;
  const ms = Date.parse(raw);
  if (!ISO_DATE_TIME.test(raw) || Number.isNaN(ms))
    throw new RowProblem(field, `is not an ISO 8601 date-time with an offset: ${JSON.stringify(raw.slice(0, 40))}`);
  const iso = new Date(ms).toISOString();
  dateTimes.set(raw, iso);
  return iso;
}

function timeZone(row: Row, field: string): string {
  const raw = text(row, field, true)!;
  if (!isTimeZone(raw)) throw new RowProblem(field, `is not an IANA time zone: ${JSON.stringify(raw.slice(0, 40))}`);
  return raw;
}

function unit(row: Row, field: string, allowed: readonly string[]): string | null {
  const raw = text(row, field, false);
  if (raw !== null && !allowed.includes(raw)) throw new RowProblem(field, `must be one of ${allowed.join(', ')}`);
  return raw;
}

function address(checks: Checks, row: Row, side: 'from' | 'to'): Address {
  const latitude = checks.field(() => number(row, `${side}_latitude`, { min: -90, max: 90 }));
  const longitude = checks.field(() => number(row, `${side}_longitude`, { min: -180, max: 180 }));
  // Only when both read: a malformed coordinate is reported as such, not as missing its pair too.
  if (latitude !== undefined && longitude !== undefined && (latitude === null) !== (longitude === null)) {
    checks.problems.push(
      `${latitude === null ? `${side}_latitude` : `${side}_longitude`}: must be given together with the other coordinate`,
    );
  }
  return {
    building_name: checks.field(() => text(row, `${side}_building_name`, false)) ?? null,
    street_address: checks.field(() => text(row, `${side}_street_address`, true)!)!,
    city: checks.field(() => text(row, `${side}_city`, true)!)!,
    state: checks.field(() => text(row, `${side}_state`, false)) ?? null,
    country: checks.field(() => text(row, `${side}_country`, true)!)!,
    zip_code: checks.field(() => text(row, `${side}_zip_code`, false)) ?? null,
    ...(typeof latitude === 'number' && typeof longitude === 'number' ? { latitude, longitude } : {}),
  };
}

function timeWindow(checks: Checks, row: Row, side: 'from' | 'to') {
  const start = checks.field(() => dateTime(row, `${side}_start_time_utc`))!;
  const end = checks.field(() => dateTime(row, `${side}_end_time_utc`))!;
  const zone = checks.field(() => timeZone(row, `${side}_timezone`))!;
  if (start !== undefined && end !== undefined && end < start)
    checks.problems.push(`${side}_end_time_utc: ends before ${side}_start_time_utc`);
  return { start_time_utc: start, end_time_utc: end, start_timezone: zone, end_timezone: zone };
}

/** A tasks row, or RowProblems naming every problem of it. */
export function parseTask(row: Row): TaskRow {
  const checks = new Checks();
  const value: TaskRow = {
    task_ref: checks.field(() => text(row, 'task_ref', true)!)!,
    from_address: address(checks, row, 'from'),
    to_address: address(checks, row, 'to'),
    from_time_window: timeWindow(checks, row, 'from'),
    to_time_window: timeWindow(checks, row, 'to'),
    total_item_weight: checks.field(() => number(row, 'total_item_weight', MEASURE)) ?? null,
    total_weight_unit: checks.field(() => unit(row, 'total_weight_unit', ['kg', 'g', 'lb'])) ?? null,
    total_item_volume: checks.field(() => number(row, 'total_item_volume', MEASURE)) ?? null,
    total_volume_unit: checks.field(() => unit(row, 'total_volume_unit', ['m3', 'cm3', 'ft3'])) ?? null,
    notes: checks.field(() => text(row, 'notes', false)) ?? null,
    from_service_s: checks.field(() => number(row, 'from_service_s', SERVICE_SECONDS)) ?? null,
    to_service_s: checks.field(() => number(row, 'to_service_s', SERVICE_SECONDS)) ?? null,
  };
  // Contract 4.5: a drop-off window that closes before the pickup window opens, no vehicle could ever serve.
  const opens = value.from_time_window.start_time_utc;
  const closes = value.to_time_window.end_time_utc;
  if (opens !== undefined && closes !== undefined && Date.parse(closes) < Date.parse(opens))
    checks.problems.push('to_end_time_utc: closes before from_start_time_utc (no vehicle could deliver it)');
  return checks.done(value);
}

/**
 * A weight or volume in its row's unit (kg, g, lb; m3, cm3, ft3): at most a billion of it, enough for 1 000 tonnes in
 * grams or 1 000 m³ in cm³ (docs/imports.md), and far inside what DynamoDB stores.
 */
const MEASURE = { min: 0, max: 1_000_000_000 } as const;

/** A stop's service time (contract 4.5, 4.10): whole seconds, at most two hours. */
const SERVICE_SECONDS = { min: 0, max: 7200, integer: true } as const;

/** An items row, or RowProblems naming every problem of it. */
export function parseItem(row: Row): ItemRow {
  const checks = new Checks();
  const value: ItemRow = {
    task_ref: checks.field(() => text(row, 'task_ref', true)!)!,
    sku: checks.field(() => text(row, 'sku', false)) ?? null,
    description: checks.field(() => text(row, 'description', true)!)!,
    quantity: checks.field(() => number(row, 'quantity', { min: 1, max: 1_000_000, integer: true, required: true })!)!,
    weight: checks.field(() => number(row, 'weight', MEASURE)) ?? null,
    weight_unit: checks.field(() => unit(row, 'weight_unit', ['kg', 'g', 'lb'])) ?? null,
    volume: checks.field(() => number(row, 'volume', MEASURE)) ?? null,
    volume_unit: checks.field(() => unit(row, 'volume_unit', ['m3', 'cm3', 'ft3'])) ?? null,
  };
  return checks.done(value);
}

const COORDINATES = ['from_latitude', 'from_longitude', 'to_latitude', 'to_longitude'];
/** Every column of each format: a column not listed is ignored, and said so in the result's warnings. */
export const KNOWN_COLUMNS: Record<FileKind, ReadonlySet<string>> = {
  tasks: new Set([
    ...TASK_REQUIRED,
    'from_building_name',
    'from_state',
    'from_zip_code',
    'to_building_name',
    'to_state',
    'to_zip_code',
    'total_item_weight',
    'total_weight_unit',
    'total_item_volume',
    'total_volume_unit',
    'notes',
    'from_service_s',
    'to_service_s',
    ...COORDINATES,
  ]),
  items: new Set([...ITEM_REQUIRED, 'sku', 'weight', 'weight_unit', 'volume', 'volume_unit']),
};
