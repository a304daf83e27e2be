import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FileProblem, kindOfHeader, MAX_ROWS, parseItem, parseTask, readRows } from '../../shared/imports/csv.ts';

const TASK_HEADER =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone';
const task = (ref: string, overrides = '') =>
  overrides ||
  `${ref},1 A St,Singapore,SG,2 B Rd,Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T02:00:00Z,Asia/Singapore,2026-11-22T03:00:00Z,2026-11-22T04:00:00Z,Asia/Singapore`;

async function collect<T>(text: string | Buffer, kind: 'tasks' | 'items', parse: (row: Record<string, string>) => T) {
  const out = [];
  for await (const row of readRows(Readable.from([Buffer.from(text)]), kind, parse)) out.push(row);
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
      'row 1 (task_ref T1): total_weight_unit: must be one of kg, g, lb',
      'row 2 (task_ref T2): total_item_weight: must be at least 0',
      'row 3 (task_ref T3): to_longitude: must be given together with the other coordinate',
      'row 4 (task_ref T4): to_longitude: must be at most 180',
      'ok',
    ]);
    expect(rows[4]!.value).toMatchObject({ total_item_weight: 1000, to_address: { latitude: -1.5, longitude: 103.8 } });
  });

  it('checks item quantities as positive whole numbers', async () => {
    const rows = await collect('task_ref,description,quantity\nT1,a,2\nT1,b,0\nT1,c,1.5\nT1,,1\n', 'items', parseItem);
    expect(rows.map((r) => r.error ?? r.value?.quantity)).toEqual([
      2,
      'row 2 (task_ref T1): quantity: must be at least 1',
      'row 3 (task_ref T1): quantity: must be a whole number',
      'row 4 (task_ref T1): description: is required',
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
