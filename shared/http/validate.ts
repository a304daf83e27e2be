import * as v from 'valibot';
import { type FieldError, validationFailed } from '#shared/http/problems';

/**
 * Validates `input` against `schema`; on failure throws a 400 `validation_failed` whose paths follow contract
 * section 2: body fields dotted (`user.email`, `runsheets[0].tasks[1].id`), others prefixed (`query.page`, `path.userID`).
 */
export function validate<T extends v.GenericSchema>(
  schema: T & SchemaNode,
  input: unknown,
  prefix: '' | 'query' | 'path' | 'header',
): v.InferOutput<T> {
  const misplaced = arraysForObjects(schema, input, prefix);
  if (misplaced.length > 0) throw validationFailed(misplaced);
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  throw validationFailed(result.issues.map((issue) => toFieldError(issue, prefix)));
}

type SchemaNode = { type: string; entries?: Record<string, SchemaNode>; wrapped?: SchemaNode; item?: SchemaNode };
const OBJECT_TYPES = new Set(['object', 'loose_object', 'strict_object', 'object_with_rest']);

/**
 * valibot's objects accept arrays (arrays are objects), so `{"user": []}` would pass a schema whose fields are all
 * optional. A JSON array is never an object here: this finds every array where the schema expects an object.
 */
function arraysForObjects(schema: SchemaNode, input: unknown, path: string): FieldError[] {
  if (input === undefined || input === null) return [];
  if (schema.type === 'optional' || schema.type === 'nullable' || schema.type === 'nullish') {
    return schema.wrapped ? arraysForObjects(schema.wrapped, input, path) : [];
  }
  if (OBJECT_TYPES.has(schema.type) && schema.entries) {
    if (Array.isArray(input)) return [{ path: path || 'body', message: 'must be an object' }];
    if (typeof input !== 'object') return [];
    return Object.entries(schema.entries).flatMap(([key, entry]) =>
      arraysForObjects(entry, (input as Record<string, unknown>)[key], path ? `${path}.${key}` : key),
    );
  }
  if (schema.type === 'array' && schema.item && Array.isArray(input)) {
    return input.flatMap((element, i) => arraysForObjects(schema.item!, element, `${path}[${i}]`));
  }
  return [];
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
  if (issue.received === 'undefined' && issue.kind === 'schema') return 'is required';
  // valibot's default messages start with "Invalid …"; ours are written for people.
  return issue.message.startsWith('Invalid ') ? `must be ${issue.expected ?? 'valid'}` : issue.message;
}
