/**
 * How every function logs (lib/constructs/dispatch-function.ts applies it; bench/cost-model.ts prices its bytes).
 *
 * Lambda's advanced logging controls: JSON records, and the platform's own records (`platform.start`,
 * `platform.runtimeDone`, `platform.report`: START, END and REPORT in text format) only at WARN and above, so a
 * successful invocation writes none of them (~350 bytes of log ingestion each). What they said is elsewhere: duration,
 * errors, throttles and concurrency in the AWS/Lambda metrics, the request's duration and outcome in the handler kit's
 * request line and metrics (shared/http/endpoint.ts). The cost: no per-invocation REPORT (billed duration, max
 * memory used, init duration) to read in the logs; a timed-out invocation still counts in AWS/Lambda Errors and the
 * API's 5xx, but its platform records are only kept as far as Lambda logs them above INFO.
 * The application's own records are not filtered by level here (no applicationLogLevel): the EMF metrics lines carry
 * no level and must all reach CloudWatch.
 */
export const FUNCTION_LOGGING = {
  format: 'JSON',
  systemLogLevel: 'WARN',
} as const;

/** Whether the platform's START/END/REPORT records of a successful invocation are ingested. */
export const platformRecordsLogged = (level: string = FUNCTION_LOGGING.systemLogLevel): boolean =>
  level === 'DEBUG' || level === 'INFO';
