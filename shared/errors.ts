/**
 * The domain's error vocabulary. Domain and storage code under `shared/` throws these: each says what went wrong in
 * the domain's own words (not found, a conflict with its reason, invalid input at a path, forbidden with what was
 * missing, a limit exceeded, a dependency unavailable) and none picks an HTTP status. `shared/http/endpoint.ts` alone
 * turns them into problem+json (`shared/http/problems.ts`, `problemOf`), so the contract's statuses live in one place.
 *
 * This module imports nothing: every floor of the house may use it.
 */
export interface FieldError {
  path: string;
  message: string;
}

export type DomainErrorKind =
  /** The input breaks a rule at `errors[].path` (a field, a query parameter, a named id that does not exist). */
  | 'invalid'
  /** The input could not be read at all (not JSON, a byte-order mark). */
  | 'malformed'
  /** No credential, or one that does not hold (expired, revoked, forged). */
  | 'unauthenticated'
  /** The caller is known, but may not do this; `detail` says what it has and what the move needs. */
  | 'forbidden'
  /** The thing does not exist, or is not the caller's to see. */
  | 'not_found'
  /** The thing's current state forbids the move; `detail` says what happened, `code` names the reason. */
  | 'conflict'
  /** The thing existed but was used up or expired (an invitation, a reset, a code). */
  | 'gone'
  /** The input is larger than the limit the operation holds to. */
  | 'too_large'
  /** The input is of a media type the operation does not read. */
  | 'unsupported'
  /** The caller has used up a quota or rate; it may try again after `retryAfterS`. */
  | 'limit_exceeded'
  /** A service the operation depends on did not answer; nothing was half-done, a retry is safe. */
  | 'unavailable';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    /** The machine-readable reason (`conflict`, `timeline_full`, `planning_changed`, …). */
    readonly code: string,
    detail: string,
    readonly errors: FieldError[] = [],
    /** For `limit_exceeded` and `unavailable`: when a retry may succeed, in seconds. */
    readonly retryAfterS?: number,
    /** For `unauthenticated`: the credential held once and can be renewed (`credentialNoLongerValid`). */
    readonly renewable = false,
  ) {
    super(detail);
    this.name = 'DomainError';
  }
}

export const invalidInput = (errors: FieldError[]): DomainError =>
  new DomainError(
    'invalid',
    'validation_failed',
    errors.map((e) => `${e.path}: ${e.message}`).join('; ') || 'the request is invalid',
    errors,
  );

/** One invalid field, e.g. a body that names an id that does not exist. */
export const invalidAt = (path: string, message: string): DomainError => invalidInput([{ path, message }]);

export const notFound = (what = 'resource'): DomainError =>
  new DomainError('not_found', 'not_found', `${what} does not exist or is not visible to you`);

/** A state precondition that does not hold; `errors` may name the fields that made it so. */
export const conflict = (detail: string, code = 'conflict', errors: FieldError[] = []): DomainError =>
  new DomainError('conflict', code, detail, errors);

export const gone = (detail: string): DomainError => new DomainError('gone', 'gone', detail);

export const forbidden = (detail = 'your role may not call this operation', code = 'forbidden'): DomainError =>
  new DomainError('forbidden', code, detail);

/**
 * A credential that held once and holds no more (an expired or revoked bearer token, a used or expired refresh
 * token): `detail` says which and how to get a new one. The HTTP floor answers it with RFC 6750's
 * `WWW-Authenticate: Bearer error="invalid_token", error_description="<detail>"`, so `detail` stays printable ASCII
 * without quotes or backslashes.
 */
export const credentialNoLongerValid = (detail: string): DomainError =>
  new DomainError('unauthenticated', 'unauthenticated', detail, [], undefined, true);

/**
 * No credential, or one that never held (an unknown email or a wrong password, a token or a client secret that is
 * not ours): the contract's generic 401, which never says which, and without the challenge of a renewable one.
 */
export const unauthenticated = (): DomainError =>
  new DomainError('unauthenticated', 'unauthenticated', 'a valid credential is required');

/** The input is larger than the operation takes; `detail` says the limit (and the way around it, if any). */
export const tooLarge = (detail: string): DomainError => new DomainError('too_large', 'payload_too_large', detail);

export const unsupportedMediaType = (expected: string): DomainError =>
  new DomainError('unsupported', 'unsupported_media_type', `the body must be ${expected}`);

export const limitExceeded = (detail: string, retryAfterS: number, code = 'rate_limited'): DomainError =>
  new DomainError('limit_exceeded', code, detail, [], retryAfterS);

export const dependencyUnavailable = (
  retryAfterS = 1,
  detail = 'a service this operation depends on is unavailable; retry shortly',
): DomainError => new DomainError('unavailable', 'unavailable', detail, [], retryAfterS);

export const isDomainError = (error: unknown, kind?: DomainErrorKind): error is DomainError =>
  error instanceof DomainError && (kind === undefined || error.kind === kind);
