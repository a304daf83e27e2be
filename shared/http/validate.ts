import * as v from 'valibot';
import { isStorableNumber, UNSTORABLE_NUMBER } from '#shared/db/numbers';
import { type FieldError, validationFailed } from '#shared/http/problems';

/**
 * Validates `input` against `schema`; on failure throws a 400 `validation_failed` whose paths follow contract
 * section 2: body fields dotted (`user.email`, `runsheets[0].tasks[1].id`), others prefixed (`query.page`, `path.userID`).
 * The cost is linear in the input and bounded by the schema's array bounds (issue 51.1): an array past its bound is one
 * problem and only its first entries (as many as the bound) are judged, and the problems nearest the top of the body
 * come first, so that the answer's first 100 (contract section 2) name what to fix first.
 */
export function validate<T extends v.GenericSchema>(
  schema: T & SchemaNode,
  input: unknown,
  prefix: '' | 'query' | 'path' | 'header',
): v.InferOutput<T> {
  const found: Preflight = { misplaced: [], oversized: [], unstorable: [] };
  const judged = preflight(schema, input, prefix, found);
  if (found.misplaced.length > 0) throw validationFailed(found.misplaced);
  const result = v.safeParse(schema, judged, { abortPipeEarly: true });
  if (result.success && found.oversized.length === 0 && found.unstorable.length === 0) return result.output;
  const problems = (result.issues ?? []).map((issue) => toFieldError(issue, prefix));
  // A number out of the schema's own range has its message already ("must be at most 90"); the storable range is
  // named only where the schema found nothing (5e-324 for a latitude, 1e16 for a weight without a bound).
  const named = new Set(problems.map((e) => e.path));
  const unstorable = found.unstorable.filter((e) => !named.has(e.path));
  throw validationFailed([...found.oversized, ...nearestFirst([...problems, ...unstorable])]);
}

type SchemaNode = {
  type: string;
  entries?: Record<string, SchemaNode>;
  wrapped?: SchemaNode;
  item?: SchemaNode;
  pipe?: readonly { type: string; requirement?: unknown; message?: unknown }[];
};
const OBJECT_TYPES = new Set(['object', 'loose_object', 'strict_object', 'object_with_rest']);
const WRAPPER_TYPES = new Set(['optional', 'nullable', 'nullish', 'exact_optional', 'undefinedable']);

interface Preflight {
  /** Arrays where the schema expects an object: answered alone (nothing else of the body can be judged). */
  misplaced: FieldError[];
  /** Arrays past their bound: answered first, with the rest. */
  oversized: FieldError[];
  /** Numbers DynamoDB cannot store (shared/db/numbers.ts): answered with the rest. */
  unstorable: FieldError[];
}

/**
 * One walk of the input along the schema, before valibot, for what valibot cannot see or would judge at a cost out
 * of proportion. valibot's objects accept arrays (arrays are objects), so `{"user": []}` would pass a schema whose
 * fields are all optional: a JSON array is never an object here. An array longer than its `maxLength` is cut to it
 * for valibot (the returned input is a copy where it differs). A number the schema reads as a value (anywhere below
 * a field that is not an object or array of the schema: a number, a union, a free-form record) must be storable.
 */
function preflight(schema: SchemaNode, input: unknown, path: string, found: Preflight): unknown {
  if (input === undefined || input === null) return input;
  if (WRAPPER_TYPES.has(schema.type)) return schema.wrapped ? preflight(schema.wrapped, input, path, found) : input;
  if (OBJECT_TYPES.has(schema.type) && schema.entries) {
    if (Array.isArray(input)) {
      found.misplaced.push({ path: path || 'body', message: 'must be an object' });
      return input;
    }
    if (typeof input !== 'object') return input;
    let copy: Record<string, unknown> | undefined;
    for (const [key, entry] of Object.entries(schema.entries)) {
      const value = (input as Record<string, unknown>)[key];
      const judged = preflight(entry, value, path ? `${path}.${key}` : key, found);
      if (judged !== value) {
        copy ??= { ...(input as Record<string, unknown>) };
        copy[key] = judged;
      }
    }
    return copy ?? input;
  }
  if (schema.type === 'array' && schema.item) {
    if (!Array.isArray(input)) return input;
    const bound = schema.pipe?.find((action) => action.type === 'max_length')?.requirement;
    let items: unknown[] = input;
    if (typeof bound === 'number' && input.length > bound) {
      const message = schema.pipe?.find((action) => action.type === 'max_length')?.message;
      found.oversized.push({
        path: path || 'body',
        message: `${typeof message === 'string' ? message : `must hold at most ${bound} entries`} (it holds ${input.length})`,
      });
      items = input.slice(0, bound);
    }
    let copy: unknown[] | undefined = items === input ? undefined : items;
    for (let i = 0; i < items.length; i++) {
      const judged = preflight(schema.item, items[i], `${path}[${i}]`, found);
      if (judged !== items[i]) {
        copy ??= [...items];
        copy[i] = judged;
      }
    }
    return copy ?? input;
  }
  if (schema.type !== 'string') findUnstorableNumbers(input, path, found.unstorable);
  return input;
}

/** Every number in `value` (a JSON value: walked once) that DynamoDB cannot store, at its path. */
function findUnstorableNumbers(value: unknown, path: string, into: FieldError[]): void {
  if (typeof value === 'number') {
    if (!isStorableNumber(value)) into.push({ path: path || 'body', message: UNSTORABLE_NUMBER });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) findUnstorableNumbers(value[i], `${path}[${i}]`, into);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) findUnstorableNumbers(item, path ? `${path}.${key}` : key, into);
  }
}

/** The problems in order of depth (a field's own before its entries'), each depth in the body's order: linear. */
function nearestFirst(problems: FieldError[]): FieldError[] {
  const byDepth: FieldError[][] = [];
  for (const problem of problems) {
    const depth = problem.path.split(/[.[]/).length;
    const level = byDepth[depth] ?? [];
    level.push(problem);
    byDepth[depth] = level;
  }
  return byDepth.flat();
}

function toFieldError(issue: v.BaseIssue<unknown>, prefix: string): FieldError {
  let path = prefix;
  for (const item of issue.path ?? []) {
    const key = item.key as string | number;
    if (typeof key === 'number') path += `[${key}]`;
    else path += path === '' ? key : `.${key}`;
  }
  return { path: path || prefix || 'body', message: messageOf(issue) };
}

function messageOf(issue: v.BaseIssue<unknown>): string {
  // A schema may say why a field is required (T5's whole replacement): its message then starts with "is required".
  if (issue.received === 'undefined' && issue.kind === 'schema') {
    return issue.message.startsWith('is required') ? issue.message : 'is required';
  }
  // valibot's default messages start with "Invalid …"; ours are written for people.
  return issue.message.startsWith('Invalid ') ? `must be ${issue.expected ?? 'valid'}` : issue.message;
}
