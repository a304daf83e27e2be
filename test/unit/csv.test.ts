import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { kindOfText, MAX_ROWS, readRows } from '../../shared/imports/csv.ts';
import { kindOfHeader, parseItem, parseTask, rowError, validatorMemoSizes } from '../../shared/imports/csv-rows.ts';
import { decodeStart, FileProblem } from '../../shared/imports/csv-text.ts';
import type { ImportResult } from '../../shared/imports/jobs.ts';
import { boundResult, cutText, ErrorTally } from '../../shared/imports/result-bounds.ts';

const TASK_HEADER =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone';
const task = (ref: string, overrides = '') =>
  overrides ||
  `${ref},1 A St,Singapore,SG,2 B Rd,Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T02:00:00Z,Asia/Singapore,2026-11-22T03:00:00Z,2026-11-22T04:00:00Z,Asia/Singapore`;

async function collect<T>(
  text: string | Buffer | Buffer[],
  kind: 'tasks' | 'items',
  parse: (row: Record<string, string>) => T,
  warnings: string[] = [],
) {
  const out = [];
  const chunks = Array.isArray(text) ? text : [Buffer.from(text)];
  for await (const row of readRows(Readable.from(chunks), kind, parse, (w) => warnings.push(w))) out.push(row);
  return out;
}

describe('reading CSV rows', () => {
  it('counts data rows from 1, across quoted newlines, with a BOM and CRLF', async () => {
    const text = `\ufeff${TASK_HEADER}\r\n${task('T1')}\r\n"T2","1 A St, Unit ""3""",Singapore,SG,"2 B\r\nRd",Singapore,SG,2026-11-22T01:00:00+08:00,2026-11-22T02:00:00+08:00,Asia/Singapore,2026-11-22T03:00:00Z,2026-11-22T04:00:00Z,Asia/Singapore\r\n${task('T3')}\r\n`;
    const rows = await collect(text, 'tasks', parseTask);
    expect(rows.map((r) => [r.n, r.ref])).toEqual([
      [1, 'T1'],
      [2, 'T2'],
      [3, 'T3'],
    ]);
    // As a spreadsheet shows them: the header is row 1, and T2's line break stays inside its row.
    expect(rows.map((r) => r.line)).toEqual([2, 3, 4]);
    expect(rows[1]!.value).toMatchObject({
      from_address: { street_address: '1 A St, Unit "3"' },
      to_address: { street_address: '2 B\r\nRd' },
      from_time_window: { start_time_utc: '2026-11-21T17:00:00.000Z' },
    });
  });

  it('rejects a row, never the file, and says which field and why', async () => {
    const rows = await collect(
      `${TASK_HEADER},total_item_weight,total_weight_unit,to_latitude,to_longitude\n` +
        `${task('T1')},12,stone,,\n${task('T2')},-1,kg,,\n${task('T3')},,,1.3,\n${task('T4')},,,1.3,200\n${task('T5')},1e3,lb,-1.5,103.8\n`,
      'tasks',
      parseTask,
    );
    expect(rows.map((r) => r.error ?? 'ok')).toEqual([
      'row 2 (task_ref T1): total_weight_unit: must be one of kg, g, lb',
      'row 3 (task_ref T2): total_item_weight: must be at least 0',
      'row 4 (task_ref T3): to_longitude: must be given together with the other coordinate',
      'row 5 (task_ref T4): to_longitude: must be at most 180',
      'ok',
    ]);
    expect(rows[4]!.value).toMatchObject({ total_item_weight: 1000, to_address: { latitude: -1.5, longitude: 103.8 } });
  });

  it('rejects a row with a number DynamoDB cannot store or past its bound, at its column (issue 51.5)', async () => {
    const rows = await collect(
      `${TASK_HEADER},total_item_weight,total_item_volume,from_latitude,from_longitude\n` +
        `${task('T1')},1e16,,,\n${task('T2')},,,1e-200,103.8\n${task('T3')},1e9,0.000001,0,-0\n${task('T4')},,1e400,,\n`,
      'tasks',
      parseTask,
    );
    expect(rows.map((r) => r.error ?? 'ok')).toEqual([
      'row 2 (task_ref T1): total_item_weight: must be at most 1000000000',
      'row 3 (task_ref T2): from_latitude: must be 0 or between 1e-130 and 9007199254740991 in magnitude',
      'ok',
      'row 5 (task_ref T4): total_item_volume: must be at most 1000000000',
    ]);
    expect(rows[2]!.value).toMatchObject({ total_item_weight: 1e9, total_item_volume: 0.000001 });
    const items = await collect(
      'task_ref,description,quantity,weight\nT1,a,1,5e-324\nT1,b,1,2.5\n',
      'items',
      parseItem,
    );
    expect(items.map((r) => r.error ?? r.value?.weight)).toEqual([
      'row 2 (task_ref T1): weight: must be 0 or between 1e-130 and 9007199254740991 in magnitude',
      2.5,
    ]);
  });

  it('keeps a stop’s service seconds (0–7 200, whole) and rejects a row with a malformed one', async () => {
    const rows = await collect(
      `${TASK_HEADER},from_service_s,to_service_s\n` +
        `${task('T1')},90,0\n${task('T2')},,7200\n${task('T3')},90.5,7201\n${task('T4')},-1,abc\n`,
      'tasks',
      parseTask,
    );
    expect(rows.map((r) => r.error ?? 'ok')).toEqual([
      'ok',
      'ok',
      'row 4 (task_ref T3): from_service_s: must be a whole number; to_service_s: must be at most 7200',
      'row 5 (task_ref T4): from_service_s: must be at least 0; to_service_s: is not a number: "abc"',
    ]);
    expect(rows[0]!.value).toMatchObject({ from_service_s: 90, to_service_s: 0 });
    expect(rows[1]!.value).toMatchObject({ from_service_s: null, to_service_s: 7200 });
  });

  it('checks item quantities as positive whole numbers', async () => {
    const rows = await collect('task_ref,description,quantity\nT1,a,2\nT1,b,0\nT1,c,1.5\nT1,,1\n', 'items', parseItem);
    expect(rows.map((r) => r.error ?? r.value?.quantity)).toEqual([
      2,
      'row 3 (task_ref T1): quantity: must be at least 1',
      'row 4 (task_ref T1): quantity: must be a whole number',
      'row 5 (task_ref T1): description: is required',
    ]);
  });

  it('names each rejected row as a spreadsheet shows it: header row 1, a blank line a row, a quoted newline none', async () => {
    const multiLine = task('T3').replace('2 B Rd', '"2 B\nRd"');
    const rows = await collect(
      `${TASK_HEADER}\n${task('T1')}\n\n${task('')}\n${multiLine}\n\n\n${task('T5').replace('Asia/Singapore', 'Mars/Base')}\n`,
      'tasks',
      parseTask,
    );
    // Rows a spreadsheet shows: 1 header, 2 T1, 3 blank, 4 no ref, 5 T3 (two lines, one row), 6–7 blank, 8 T5.
    expect(rows.map((r) => [r.n, r.line])).toEqual([
      [1, 2],
      [2, 4],
      [3, 5],
      [4, 8],
    ]);
    expect(rows.filter((r) => r.error).map((r) => r.error)).toEqual([
      'row 4 (no task_ref): task_ref: is required',
      'row 8 (task_ref T5): from_timezone: is not an IANA time zone: "Mars/Base"',
    ]);
  });

  it('fails the whole file for a missing column, broken quoting, binary data, or too many rows', async () => {
    await expect(collect('task_ref,quantity\nT1,1\n', 'items', parseItem)).rejects.toThrow(
      /lacks the required column\(s\) description/,
    );
    await expect(collect(`${TASK_HEADER}\n"T1,broken\n`, 'tasks', parseTask)).rejects.toThrow(FileProblem);
    await expect(collect(Buffer.from([0x50, 0x4b, 3, 4, 0, 0]), 'tasks', parseTask)).rejects.toThrow(/not CSV text/);
    const tooMany = [TASK_HEADER, ...Array.from({ length: MAX_ROWS.tasks + 1 }, (_, i) => task(`T${i}`))].join('\n');
    await expect(collect(tooMany, 'tasks', () => null)).rejects.toThrow(`more than ${MAX_ROWS.tasks} rows`);
  });

  it('tells a tasks file from an items file by the header', () => {
    expect(kindOfHeader(TASK_HEADER.split(','))).toBe('tasks');
    expect(kindOfHeader(['task_ref', 'Quantity'])).toBe('items');
    expect(kindOfHeader(['a', 'b'])).toBeUndefined();
  });
});

describe('files as spreadsheets save them', () => {
  const SAVE = /save it from the spreadsheet as 'CSV UTF-8 \(Comma delimited\)'/;
  // "Schönhauser Allee" as Windows-1252 (Excel's plain "CSV" on Windows): ö is the one byte 0xF6.
  const cp1252Row = Buffer.concat([
    Buffer.from('T1,'),
    Buffer.from([0x53, 0x63, 0x68, 0xf6, 0x6e, 0x68, 0x61, 0x75, 0x73, 0x65, 0x72, 0x20, 0x41, 0x6c, 0x6c, 0x65, 0x65]),
    Buffer.from(
      ',Berlin,DE,2 B Rd,Berlin,DE,2026-11-22T01:00:00Z,2026-11-22T02:00:00Z,Europe/Berlin,2026-11-22T03:00:00Z,2026-11-22T04:00:00Z,Europe/Berlin\r\n',
    ),
  ]);

  it('names every problem of a row in its one error, and says when a row has no ref', async () => {
    const rows = await collect(
      `${TASK_HEADER},total_item_weight,from_latitude,from_longitude\n` +
        'T1,1 A St,,SG,2 B Rd,Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T02:00:00Z,Mars/Base,2026-11-22T03:00:00Z,2026-11-22T02:00:00Z,Asia/Singapore,"12,5",,\n' +
        ',,Singapore,SG,2 B Rd,Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T02:00:00Z,Asia/Singapore,2026-11-22T03:00:00Z,2026-11-22T04:00:00Z,Asia/Singapore,,"52,52",13.4\n',
      'tasks',
      parseTask,
    );
    expect(rows.map((r) => r.error)).toEqual([
      'row 2 (task_ref T1): from_city: is required; from_timezone: is not an IANA time zone: "Mars/Base"; ' +
        'to_end_time_utc: ends before to_start_time_utc; ' +
        'total_item_weight: is not a number: "12,5" (write the decimal separator as a point)',
      'row 3 (no task_ref): task_ref: is required; from_latitude: is not a number: "52,52" (write the decimal ' +
        'separator as a point); from_street_address: is required',
    ]);
    // A drop-off window that closes before the pickup window opens: no vehicle could ever serve the row.
    const impossible = await collect(
      `${TASK_HEADER}\n` +
        'T3,1 A St,Singapore,SG,2 B Rd,Singapore,SG,2026-11-22T05:00:00Z,2026-11-22T06:00:00Z,Asia/Singapore,2026-11-22T03:00:00Z,2026-11-22T04:00:00Z,Asia/Singapore\n',
      'tasks',
      parseTask,
    );
    expect(impossible.map((r) => r.error)).toEqual([
      'row 2 (task_ref T3): to_end_time_utc: closes before from_start_time_utc (no vehicle could deliver it)',
    ]);
    const items = await collect('task_ref,description,quantity\n,,0\n', 'items', parseItem);
    expect(items.map((r) => r.error)).toEqual([
      'row 2 (no task_ref): task_ref: is required; description: is required; quantity: must be at least 1',
    ]);
  });

  it('fails a Windows-1252 file, naming the line and what its bytes say, and stores nothing garbled', async () => {
    const file = Buffer.concat([Buffer.from(`${TASK_HEADER}\r\n${task('T0')}\r\n`), cp1252Row]);
    const parsed: unknown[] = [];
    await expect(
      collect(file, 'tasks', (row) => {
        parsed.push(row);
        return row;
      }),
    ).rejects.toThrow(/the file is not UTF-8 text: line 3 .*"T1,Schönhauser Allee,Berlin/);
    await expect(collect(file, 'tasks', parseTask)).rejects.toThrow(SAVE);
    expect(JSON.stringify(parsed)).not.toContain('\ufffd');
    expect(() => decodeStart(file, true)).toThrow(/not UTF-8 text: line 3/);
  });

  it('finds bytes that are not UTF-8 past the first chunk, and decodes a character split across chunks', async () => {
    const valid = Buffer.from(`${TASK_HEADER}\n${Array.from({ length: 600 }, (_, i) => task(`T${i}`)).join('\n')}\n`);
    expect(valid.length).toBeGreaterThan(65_536);
    await expect(collect([valid, cp1252Row], 'tasks', parseTask)).rejects.toThrow(/not UTF-8 text: line 602 /);
    const o = Buffer.from('ö');
    const split = [
      Buffer.from(`${TASK_HEADER}\nT1,Sch`),
      o.subarray(0, 1),
      Buffer.concat([o.subarray(1), Buffer.from(task('').slice(task('').indexOf(',', 1)))]),
    ];
    const rows = await collect(split, 'tasks', parseTask);
    expect(rows[0]!.value?.from_address.street_address).toBe('Sch\u00f6');
  });

  it('fails a semicolon or tab separated file, an empty file, a workbook and UTF-16, saying how to save it', async () => {
    const semicolons = `${TASK_HEADER.replaceAll(',', ';')}\n${task('T1').replaceAll(',', ';')}\n`;
    await expect(collect(semicolons, 'tasks', parseTask)).rejects.toThrow(/separated by semicolons.*CSV UTF-8/);
    expect(() => kindOfText(semicolons)).toThrow(/separated by semicolons/);
    expect(() => kindOfText(TASK_HEADER.replaceAll(',', '\t'))).toThrow(/separated by tabs/);
    await expect(collect(Buffer.alloc(0), 'tasks', parseTask)).rejects.toThrow(/the tasks file is empty \(0 bytes\)/);
    expect(() => decodeStart(Buffer.alloc(0), true)).toThrow(/the file is empty \(0 bytes\)/);
    const xlsx = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x06, 0x00, 0x08, 0x00, 0x00, 0x00]);
    await expect(collect(xlsx, 'tasks', parseTask)).rejects.toThrow(/spreadsheet workbook \(.xlsx or .ods\), not CSV/);
    expect(() => decodeStart(xlsx, true)).toThrow(SAVE);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${TASK_HEADER}\r\n`, 'utf16le')]);
    await expect(collect(utf16, 'tasks', parseTask)).rejects.toThrow(/UTF-16 text/);
    expect(() => decodeStart(Buffer.from(`${TASK_HEADER}\r\n`, 'utf16le'), true)).toThrow(/UTF-16 text/);
  });

  it('warns of a header without rows and of columns it ignores', async () => {
    const warnings: string[] = [];
    expect(await collect(`\ufeff${TASK_HEADER}\r\n`, 'tasks', parseTask, warnings)).toEqual([]);
    expect(warnings).toEqual(['the file has a header but no rows']);
    const more: string[] = [];
    const rows = await collect(`${TASK_HEADER},Colour,\n${task('T1')},red,\n`, 'tasks', parseTask, more);
    expect(rows.map((r) => r.error ?? 'ok')).toEqual(['ok']);
    expect(more).toEqual(['unknown columns ignored: "Colour", (unnamed column 15)']);
  });

  it('reads the start of a file cut inside a character, and tells its kind', () => {
    const start = Buffer.concat([Buffer.from(`\ufeff${TASK_HEADER}\nT1,Sch`), Buffer.from('ö').subarray(0, 1)]);
    expect(kindOfText(decodeStart(start, false))).toBe('tasks');
    expect(() => decodeStart(start, true)).toThrow(/not UTF-8/);
  });
});

describe('what the validator keeps between files (issue 33 item 5)', () => {
  /** `zone` with its letters' case flipped by the bits of `i`: Intl takes every spelling as the same valid zone. */
  const spelling = (zone: string, i: number) =>
    [...zone].map((c, k) => ((i >> k) & 1 ? c.toUpperCase() : c.toLowerCase())).join('');

  // 20 000 rows, 20 times the zones' bound (each junk zone costs a thrown Intl check: 100 000 took 35 to 210 s on the
  // shared machine; the old memo held every one, 102 504 entries at 100 000 rows).
  it('stays within its bounds over a file of 20 000 different junk zones, 5 000 spellings of a zone, and times', async () => {
    const rows = 20_000;
    const lines = [TASK_HEADER];
    for (let i = 0; i < rows; i++) {
      const minute = String(i % 60).padStart(2, '0');
      const day = String(1 + (Math.floor(i / 60) % 28)).padStart(2, '0');
      const month = String(1 + (Math.floor(i / 1680) % 12)).padStart(2, '0');
      const start = `20${26 + Math.floor(i / 20160)}-${month}-${day}T01:${minute}:00Z`;
      const end = `20${26 + Math.floor(i / 20160)}-${month}-${day}T02:${minute}:00Z`;
      lines.push(
        `T${i},1 A St,Berlin,DE,2 B Rd,Berlin,DE,${start},${end},Junk/Zone-${i},${start},${end},${i < 5_000 ? spelling('Europe/Berlin', i) : 'Europe/Berlin'}`,
      );
    }
    let rejected = 0;
    for await (const row of readRows(Readable.from([Buffer.from(lines.join('\n'))]), 'tasks', parseTask)) {
      if (row.problems?.some((p) => p.startsWith('from_timezone: is not an IANA time zone'))) rejected++;
    }
    expect(rejected).toBe(rows);
    const memos = validatorMemoSizes();
    expect(memos.timeZones.size).toBeGreaterThan(0);
    expect(memos.timeZones.size).toBeLessThanOrEqual(memos.timeZones.limit);
    expect(memos.timeZones.limit).toBeLessThanOrEqual(1_000);
    expect(memos.dateTimes.size).toBeLessThanOrEqual(memos.dateTimes.limit);
    expect(memos.dateTimes.limit).toBeLessThanOrEqual(10_000);
  }, 120_000);
});

describe('the bounds of an import result (issue 33 item 6, contract 4.9)', () => {
  const result = (errors: string[], warnings: string[] = []): ImportResult => ({
    id: 'r',
    task_import_job_id: 'j',
    file_import_results: [],
    total_tasks_counted: errors.length,
    total_tasks_imported: 0,
    total_tasks_rejected: errors.length,
    total_items_counted: 0,
    total_items_imported: 0,
    total_items_rejected: 0,
    errors,
    warnings,
    server_time: '2026-11-25T00:00:00.000Z',
    org_id: null,
  });

  it('names a task_ref cut to 64 characters in a row error', () => {
    const error = rowError(7, `R${'x'.repeat(10_000)}`, ['task_ref: is longer than 1000 characters']);
    expect(error).toBe(`row 7 (task_ref R${'x'.repeat(62)}…): task_ref: is longer than 1000 characters`);
    expect(rowError(1, 'T1', ['a: b'])).toBe('row 1 (task_ref T1): a: b');
  });

  it('cuts a string to its bound without splitting a character of two code units', () => {
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abcd', 3)).toBe('ab…');
    expect(cutText('a😀b', 3)).toBe('a…');
  });

  it('keeps the first 1 000 errors and 100 warnings, each at most 500 characters, and counts them all', () => {
    const tally = new ErrorTally();
    for (let i = 0; i < 2_500; i++) tally.add(`row ${i + 1}: ${'e'.repeat(900)}`);
    expect(tally.total).toBe(2_500);
    expect(tally.kept).toHaveLength(1_000);
    const bounded = boundResult({
      ...result(
        tally.kept,
        Array.from({ length: 150 }, (_, i) => `w${i} ${'w'.repeat(900)}`),
      ),
      errors_total: tally.total,
    });
    expect(bounded).toMatchObject({ errors_total: 2_500, errors_truncated: true });
    expect(bounded.errors).toHaveLength(1_000);
    expect(bounded.errors[0]).toMatch(/^row 1: e+…$/);
    expect(bounded.warnings).toHaveLength(100);
    for (const text of [...bounded.errors, ...bounded.warnings]) expect(text.length).toBeLessThanOrEqual(500);
    expect(Buffer.byteLength(JSON.stringify(bounded))).toBeLessThanOrEqual(1024 * 1024);
    expect(boundResult(result(['row 1 (task_ref T1): a: b']))).toMatchObject({
      errors: ['row 1 (task_ref T1): a: b'],
      errors_total: 1,
      errors_truncated: false,
    });
  });

  it('stays within 1 MiB when every character takes six bytes as JSON, and says it cut', () => {
    const bounded = boundResult(result(Array.from({ length: 1_000 }, () => '\u0001'.repeat(600))));
    expect(Buffer.byteLength(JSON.stringify(bounded))).toBeLessThanOrEqual(1024 * 1024);
    expect(bounded.errors.length).toBeLessThan(1_000);
    expect(bounded).toMatchObject({ errors_total: 1_000, errors_truncated: true });
  });
});
