/**
 * What counts as "a dependency failed, throttled or did not answer in time" (503 `unavailable`), as opposed to a
 * domain outcome (a conditional check, a missing item) or a bug (500). Used by the handler factory's one error
 * mapping (shared/http/endpoint.ts), by the token check and by the workers (retry later instead of failing a job).
 */

const TRANSIENT_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'LimitExceededException',
  'SlowDown',
  'InternalServerError',
  'InternalError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TransactionInProgressException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'AbortError',
  'KMSInternalException',
  'KeyUnavailableException',
  'InternalServiceError',
]);

const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);

interface ErrorLike {
  name?: string;
  code?: string;
  $fault?: string;
  $metadata?: { httpStatusCode?: number };
  CancellationReasons?: { Code?: string }[];
  cause?: unknown;
  errors?: unknown[];
}

/** True when `error` (or what caused it) is a dependency's fault: worth a 503 and a retry, never a 4xx or 500. */
export function isDependencyFailure(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as ErrorLike;
  if (e.name === 'TransactionCanceledException') {
    // ConditionalCheckFailed is a domain conflict; throttling or a conflicting transaction is transient.
    const codes = (e.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None');
    if (codes.includes('ConditionalCheckFailed')) return false;
    return codes.some((code) => code === 'ThrottlingError' || code === 'TransactionConflict' || code === 'Unknown');
  }
  if (e.name && TRANSIENT_NAMES.has(e.name)) return true;
  if (e.code && SOCKET_CODES.has(e.code)) return true;
  if (e.$fault === 'server') return true;
  const status = e.$metadata?.httpStatusCode;
  if (status === 429 || (status !== undefined && status >= 500)) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDependencyFailure(inner, depth + 1))) return true;
  return isDependencyFailure(e.cause, depth + 1);
}

/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 1;
