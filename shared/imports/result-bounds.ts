/**
 * The bounds of an import result (contract 4.9): I7 answers it inline, so it is at most 1 MiB whatever the files
 * held. `errors[]` keeps the first 1 000 rejected rows (fewer if their bytes would pass the bound), each string at
 * most 500 characters with the `task_ref` in it cut to 64; `warnings[]` the first 100, cut alike. `errors_total`
 * always says how many errors there were, and `errors_truncated` whether `errors[]` holds fewer.
 * The runner keeps only what it may show (ErrorTally), the result is stored bounded, and I7 bounds what it reads
 * again, so a result stored before these bounds (or by I12) is answered within them too.
 */
/** An import's result (I7), as the runner or I12 makes it and the bounds below keep it. */
export interface ImportResult {
  id: string;
  task_import_job_id: string;
  file_import_results: Record<string, unknown>[];
  total_tasks_counted: number;
  total_tasks_imported: number;
  total_tasks_rejected: number;
  total_items_counted: number;
  total_items_imported: number;
  total_items_rejected: number;
  errors: string[];
  /** How many errors there were: `errors[]` holds the first of them (shared/imports/result-bounds.ts). */
  errors_total?: number;
  /** Whether `errors[]` holds fewer than `errors_total`. */
  errors_truncated?: boolean;
  /** What rejected nothing but is worth telling (columns ignored, a header without rows). */
  warnings: string[];
  server_time: string;
  org_id: string | null;
  dry_run?: boolean;
}

export const MAX_RESULT_BYTES = 1024 * 1024;
export const MAX_ERRORS = 1000;
export const MAX_WARNINGS = 100;
/** Characters of one `errors[]` or `warnings[]` string. */
export const MAX_MESSAGE_CHARS = 500;
/** Characters of the `task_ref` an error names. */
export const MAX_REF_CHARS = 64;
/** Bytes (as JSON) of a result's `file_import_results`, which I12 takes free-form. */
export const MAX_FILE_RESULTS_BYTES = 256 * 1024;

/** `text` whole, or its first `max - 1` characters and `…` (a surrogate pair is never split). */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** The errors of a run as it goes: every one counted, the first MAX_ERRORS kept (cut), the rest never held. */
export class ErrorTally {
  readonly kept: string[] = [];
  total = 0;

  add(error: string): void {
    this.total++;
    if (this.kept.length < MAX_ERRORS) this.kept.push(cutText(error, MAX_MESSAGE_CHARS));
  }
}

export type BoundedResult = ImportResult & { errors_total: number; errors_truncated: boolean };

/** The entries of `files` that fit MAX_FILE_RESULTS_BYTES, from the first. */
function boundFileResults(files: Record<string, unknown>[]): Record<string, unknown>[] {
  const kept: Record<string, unknown>[] = [];
  let bytes = 2;
  for (const file of files) {
    bytes += jsonBytes(file) + 1;
    if (bytes > MAX_FILE_RESULTS_BYTES) break;
    kept.push(file);
  }
  return kept;
}

/**
 * `result` within the bounds: warnings and errors cut by count and length, then as many errors as the bytes left
 * allow (a string of quotes or control characters takes up to six bytes a character as JSON).
 */
export function boundResult(result: ImportResult): BoundedResult {
  const total = Math.max(result.errors_total ?? 0, result.errors.length);
  const rest: BoundedResult = {
    ...result,
    file_import_results: boundFileResults(result.file_import_results),
    warnings: (result.warnings ?? []).slice(0, MAX_WARNINGS).map((w) => cutText(w, MAX_MESSAGE_CHARS)),
    errors: [],
    errors_total: total,
    // false: its one byte more than `true` is counted in the budget.
    errors_truncated: false,
  };
  let budget = MAX_RESULT_BYTES - jsonBytes(rest);
  const errors: string[] = [];
  for (const error of result.errors.slice(0, MAX_ERRORS)) {
    const cut = cutText(error, MAX_MESSAGE_CHARS);
    budget -= jsonBytes(cut) + 1;
    if (budget < 0) break;
    errors.push(cut);
  }
  return { ...rest, errors, errors_truncated: errors.length < total };
}
