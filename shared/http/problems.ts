/**
 * The HTTP side of errors: RFC 9457 problem+json (contract section 2). Domain code throws the vocabulary of
 * `shared/errors.ts`; `problemOf` turns it into a Problem here, and the handler factory answers it. Code of the HTTP
 * floor (`shared/http`, the routes) may throw a Problem directly. Anything else thrown is a 500 `internal`.
 */
import { DomainError, type DomainErrorKind, type FieldError } from '#shared/errors';

export type { FieldError };

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    detail: string,
    readonly errors: FieldError[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'Problem';
  }
}

/** A problem body names at most this many problems (contract section 2): the first, then their count. */
export const MAX_NAMED_PROBLEMS = 100;

export const validationFailed = (errors: FieldError[]): Problem =>
  new Problem(
    400,
    'validation_failed',
    'Request validation failed',
    (errors
      .slice(0, MAX_NAMED_PROBLEMS)
      .map((e) => `${e.path}: ${e.message}`)
      .join('; ') || 'the request is invalid') +
      (errors.length > MAX_NAMED_PROBLEMS ? `; and ${errors.length - MAX_NAMED_PROBLEMS} more problems` : ''),
    errors,
  );

/** A single invalid field, e.g. a body that names an id that does not exist. */
export const invalidField = (path: string, message: string): Problem => validationFailed([{ path, message }]);

export const malformedJson = (detail: string): Problem => new Problem(400, 'malformed_json', 'Malformed JSON', detail);

export const forbidden = (detail = 'your role may not call this operation', code = 'forbidden'): Problem =>
  new Problem(403, code, 'Forbidden', detail);

export const notFound = (what = 'resource'): Problem =>
  new Problem(404, 'not_found', 'Not found', `${what} does not exist or is not visible to you`);

/** 405: the path is an operation's, the method none of its operations'; `Allow` names the methods it has (RFC 9110). */
export const methodNotAllowed = (method: string, allowed: readonly string[]): Problem =>
  new Problem(
    405,
    'method_not_allowed',
    'Method not allowed',
    `${method} is not an operation of this path; it takes ${allowed.join(', ')}`,
    [],
    { Allow: allowed.join(', ') },
  );

export const conflict = (detail: string, code = 'conflict'): Problem => new Problem(409, code, 'Conflict', detail);

export const payloadTooLarge = (limit: number): Problem =>
  new Problem(413, 'payload_too_large', 'Payload too large', `the body exceeds ${limit} bytes`);

export const unsupportedMediaType = (expected: string): Problem =>
  new Problem(415, 'unsupported_media_type', 'Unsupported media type', `the body must be ${expected}`);

/** 503: a dependency failed, throttled or did not answer in time; nothing was half-done, retrying is safe. */
export const unavailable = (
  retryAfterSeconds = 1,
  detail = 'a service this operation depends on is unavailable; retry shortly',
): Problem =>
  new Problem(503, 'unavailable', 'Service unavailable', detail, [], { 'Retry-After': String(retryAfterSeconds) });

export const internal = (): Problem =>
  new Problem(
    500,
    'internal',
    'Internal error',
    'an unexpected error occurred; the request id identifies it in the logs',
  );

const STATUS_OF: Record<DomainErrorKind, { status: number; title: string }> = {
  invalid: { status: 400, title: 'Request validation failed' },
  malformed: { status: 400, title: 'Malformed JSON' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  conflict: { status: 409, title: 'Conflict' },
  gone: { status: 410, title: 'Gone' },
  too_large: { status: 413, title: 'Payload too large' },
  unsupported: { status: 415, title: 'Unsupported media type' },
  limit_exceeded: { status: 429, title: 'Too many requests' },
  unavailable: { status: 503, title: 'Service unavailable' },
};

/** The problem a domain error answers: its kind picks the status and title, its code and detail pass as they are. */
export function problemOf(error: DomainError): Problem {
  const { status, title } = STATUS_OF[error.kind];
  const headers: Record<string, string> =
    error.retryAfterS === undefined ? {} : { 'Retry-After': String(error.retryAfterS) };
  // A credential that held once (credentialNoLongerValid): RFC 6750's challenge tells a client's library what its
  // person reads in `detail`. The generic 401 (`unauthenticated()`: none, or one that never held) has none.
  if (error.kind === 'unauthenticated' && error.renewable) {
    headers['WWW-Authenticate'] =
      `Bearer error="invalid_token", error_description="${error.message.replace(/["\\]/g, "'")}"`;
  }
  return new Problem(status, error.code, title, error.message, error.errors, headers);
}

/** A Problem as it is, a domain error as `problemOf` maps it, anything else undefined. */
export const asProblem = (error: unknown): Problem | undefined =>
  error instanceof Problem ? error : error instanceof DomainError ? problemOf(error) : undefined;

const slug = (code: string): string => code.replaceAll('_', '-');

/** The answer's body: `errors[]` holds the first MAX_NAMED_PROBLEMS, then `errors_truncated` and `errors_count`. */
export function problemBody(problem: Problem, requestId: string): Record<string, unknown> {
  const truncated = problem.errors.length > MAX_NAMED_PROBLEMS;
  return {
    type: `https://dispatch.internal/problems/${slug(problem.code)}`,
    title: problem.title,
    status: problem.status,
    code: problem.code,
    detail: problem.message,
    errors: truncated ? problem.errors.slice(0, MAX_NAMED_PROBLEMS) : problem.errors,
    ...(truncated ? { errors_truncated: true, errors_count: problem.errors.length } : {}),
    request_id: requestId,
  };
}
