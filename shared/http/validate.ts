import * as v from 'valibot';
import { type FieldError, validationFailed } from '#shared/http/problems';

/**
 * Validates `input` against `schema`; on failure throws a 400 `validation_failed` whose paths follow contract
 * section 2: body fields dotted (`user.email`, `runsheets[0].tasks[1].id`), others prefixed (`query.page`, `path.userID`).
 */
export function validate<T extends v.GenericSchema>(
  schema: T,
  input: unknown,
  prefix: '' | 'query' | 'path' | 'header',
): v.InferOutput<T> {
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  throw validationFailed(result.issues.map((issue) => toFieldError(issue, prefix)));
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
