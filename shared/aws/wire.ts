/**
 * The one place where every AWS client's wire behaviour is set: connection and request timeouts and the retry budget
 * (the SDK's standard retry strategy: exponential backoff with full jitter from a 100 ms base, and its retry quota, a
 * token bucket of 500 per client in which a retry costs 5 and a retried timeout 10, so a dependency that keeps
 * failing stops being retried instead of being hammered). The numbers keep a request whose dependency stalls within
 * 10 s, far inside API Gateway's 30 s integration limit and the functions' 29 s timeout:
 *
 * | client   | connect | request (socket idle) | attempts | worst case under a stall        |
 * |----------|---------|-----------------------|----------|---------------------------------|
 * | DynamoDB | 1 s     | 2.5 s                 | 3        | 3 × 2.5 s + backoff ≈ 7.8 s     |
 * | others   | 1 s     | 3 s                   | 2        | 2 × 3 s + backoff ≈ 6.1 s       |
 * | route matrix | 1 s | 30 s                  | 3        | 3 × 30 s + backoff ≈ 90 s       |
 *
 * (S3, SQS, SNS, SES, KMS, Secrets Manager, the WebSocket management API.) The route matrix (Amazon Location, called
 * only by background functions with minutes to run: shared/routing/location-travel.ts) answers up to 160 000 pairs a
 * call, which takes seconds, not milliseconds. `DEPENDENCY_CONNECT_TIMEOUT_MS`,
 * `DEPENDENCY_REQUEST_TIMEOUT_MS` and `DEPENDENCY_MAX_ATTEMPTS` override them (tests make stalls shorter).
 */
export type WireProfile = 'dynamodb' | 'default' | 'routeMatrix';

const PROFILES: Record<WireProfile, { connectMs: number; requestMs: number; attempts: number }> = {
  dynamodb: { connectMs: 1000, requestMs: 2500, attempts: 3 },
  default: { connectMs: 1000, requestMs: 3000, attempts: 2 },
  routeMatrix: { connectMs: 1000, requestMs: 30_000, attempts: 3 },
};

function override(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** The numbers in force for a profile (read when a client is made). */
export function wireNumbers(profile: WireProfile = 'default') {
  const base = PROFILES[profile];
  return {
    connectMs: override('DEPENDENCY_CONNECT_TIMEOUT_MS', base.connectMs),
    requestMs: override('DEPENDENCY_REQUEST_TIMEOUT_MS', base.requestMs),
    attempts: override('DEPENDENCY_MAX_ATTEMPTS', base.attempts),
  };
}

/** Spread into every AWS client's constructor options. */
export function wire(profile: WireProfile = 'default') {
  const numbers = wireNumbers(profile);
  return {
    maxAttempts: numbers.attempts,
    retryMode: 'standard',
    // The SDK makes its NodeHttpHandler from these options. requestTimeout bounds the whole attempt; without
    // throwOnRequestTimeout the handler would only log a warning and keep waiting. socketTimeout bounds idleness.
    requestHandler: {
      connectionTimeout: numbers.connectMs,
      requestTimeout: numbers.requestMs,
      socketTimeout: numbers.requestMs,
      throwOnRequestTimeout: true,
    },
  } as const;
}
