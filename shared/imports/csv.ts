/**
 * The CSV formats of contract 4.5, streamed: the bytes are made text (csv-text.ts), then csv-parse (RFC 4180 quoting)
 * feeds each row to a validator (csv-rows.ts); a rejected row becomes one
 * `row <n> (task_ref <ref>): <field>: <reason>; <field>: <reason>` string naming every problem of the row, and never
 * stops the file. File-level problems (empty, a spreadsheet, not UTF-8, not comma separated, a missing column, too
 * many rows) throw a FileProblem, which fails the whole job with a message that says how to save the file instead.
 */
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import {
  type FileKind,
  ITEM_REQUIRED,
  KNOWN_COLUMNS,
  kindOfHeader,
  type Row,
  RowProblems,
  rowError,
  TASK_REQUIRED,
} from '#shared/imports/csv-rows';
import { FileProblem, SAVE_AS_CSV_UTF8, Utf8Text } from '#shared/imports/csv-text';

export const MAX_FILE_BYTES = 50 * 1024 * 1024;
/**
 * Rows a file may hold. The contract's 100 000 is the tasks file's; an items file holds several items per task (the
 * import benchmark the project was asked for has 300 000 items for 100 000 tasks), so it may hold ten times as many.
 */
export const MAX_ROWS: Record<FileKind, number> = { tasks: 100_000, items: 1_000_000 };

/** A header that is one column holding `;` or a tab: a spreadsheet's CSV for another locale, or its tab text. */
function delimiterProblem(header: string[]): FileProblem | undefined {
  if (header.length !== 1) return undefined;
  const only = header[0] ?? '';
  if (only.includes(';'))
    return new FileProblem(
      "the file's columns are separated by semicolons (a spreadsheet's 'CSV' in a European locale), not commas: " +
        `${SAVE_AS_CSV_UTF8}; where it still writes semicolons, set the list separator to a comma in the ` +
        "system's region settings, or replace the semicolons of the header and rows with commas",
    );
  if (only.includes('\t'))
    return new FileProblem(
      `the file's columns are separated by tabs ('Text (Tab delimited)'), not commas: ${SAVE_AS_CSV_UTF8}`,
    );
  return undefined;
}

/**
 * The kind of a file from its (decoded) first bytes: the header row must parse, with commas, into the columns of a
 * tasks file or an items file.
 */
export function kindOfText(text: string): FileKind {
  if (text.trim() === '') throw new FileProblem(`the file is blank (no header row): ${SAVE_AS_CSV_UTF8}`);
  let header: string[] = [];
  try {
    header = (parseSync(text, { bom: true, to_line: 1, relax_quotes: true }) as string[][])[0] ?? [];
  } catch {
    header = [];
  }
  const problem = delimiterProblem(header);
  if (problem) throw problem;
  const kind = kindOfHeader(header);
  if (!kind) {
    throw new FileProblem(
      'neither a tasks file (a header naming from_street_address) nor an items file (a header naming quantity)',
    );
  }
  return kind;
}

/** Where csv-parse read a record (its `info` option): blank lines skipped before it, records read up to it. */
interface RecordInfo {
  empty_lines: number;
  records: number;
}

export interface RowOutcome<T> {
  /** Data rows count from 1 (the row's identity: stable ids and repeats are keyed by it). */
  n: number;
  /**
   * The row as a spreadsheet shows the file: the header is row 1, a blank line is a row of its own, a quoted value
   * with line breaks stays in one row. What a row's errors[] string names, so a person finds it at once.
   */
  line: number;
  ref: string;
  value?: T;
  /** Every problem of a rejected row, `<field>: <reason>` each (rowError makes them its errors[] string). */
  problems?: string[];
  /** The row's errors[] string, when it is rejected. */
  error?: string;
}

/**
 * Streams `source` (a CSV file's bytes) through the UTF-8 check and the parser, checks the header, and yields one
 * outcome per data row. The caller adds the checks that need other rows (duplicate refs, items of unknown tasks).
 * `onWarning` hears what is worth telling but rejects nothing: columns ignored, a header without rows.
 */
export async function* readRows<T>(
  source: Readable,
  kind: FileKind,
  parseRow: (row: Row) => T,
  onWarning: (warning: string) => void = () => {},
): AsyncGenerator<RowOutcome<T>> {
  const required = kind === 'tasks' ? TASK_REQUIRED : ITEM_REQUIRED;
  const text = new Utf8Text();
  const parser = source.pipe(text).pipe(
    parse({
      bom: true,
      columns: (header: string[]) => {
        const problem = delimiterProblem(header);
        if (problem) throw problem;
        const names = header.map((h) => h.trim().toLowerCase());
        const missing = required.filter((column) => !names.includes(column));
        if (missing.length > 0) {
          throw new FileProblem(`the ${kind} file's header lacks the required column(s) ${missing.join(', ')}`);
        }
        // Matched case-insensitively, but shown as the header has it, quoted: the user searches their file for it.
        const unknown = names
          .map((name, i) =>
            KNOWN_COLUMNS[kind].has(name)
              ? undefined
              : name === ''
                ? `(unnamed column ${i + 1})`
                : JSON.stringify(header[i]),
          )
          .filter((name) => name !== undefined);
        if (unknown.length > 0) onWarning(`unknown columns ignored: ${unknown.join(', ')}`);
        return names;
      },
      relax_column_count: true,
      skip_empty_lines: true,
      trim: false,
      // Each record with where it was: how many records and blank lines came before it, for its spreadsheet row.
      info: true,
    }),
  );
  source.on('error', (error) => text.destroy(error));
  text.on('error', (error) => parser.destroy(error));
  let n = 0;
  try {
    for await (const { record: row, info } of parser as AsyncIterable<{ record: Row; info: RecordInfo }>) {
      n++;
      if (n > MAX_ROWS[kind]) throw new FileProblem(`the ${kind} file has more than ${MAX_ROWS[kind]} rows`);
      const ref = row['task_ref']?.trim() ?? '';
      // The header's row, the blank lines skipped so far, and this record's place among the records.
      const line = 1 + info.empty_lines + info.records;
      try {
        yield { n, line, ref, value: parseRow(row) };
      } catch (error) {
        if (!(error instanceof RowProblems)) throw error;
        yield { n, line, ref, problems: error.problems, error: rowError(line, ref, error.problems) };
      }
    }
  } catch (error) {
    if (error instanceof FileProblem) throw error;
    const code = (error as { code?: string }).code;
    if (code?.startsWith('CSV_'))
      throw new FileProblem(`the ${kind} file is not valid CSV: ${(error as Error).message}`);
    throw error;
  } finally {
    // A file given up on (a problem found, the caller stopped) is not read on: its connection is released.
    source.destroy();
  }
  if (text.bytes === 0) throw new FileProblem(`the ${kind} file is empty (0 bytes): ${SAVE_AS_CSV_UTF8}`);
  if (n === 0) onWarning('the file has a header but no rows');
}
