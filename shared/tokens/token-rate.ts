/**
 * X5's own rate limits (issue 42 item 9): API Gateway's route throttle is shared by every caller of the route, so a
 * few bad requests a second from one place used to deny tokens to every partner. Each source address and each client
 * now has a budget of its own, counted in DynamoDB (shared/db/window-counter.ts) by the function, in the cloud and
 * locally alike: a source that exceeds its budget, or a client minting tokens in a loop, gets 429 `rate_limited` with
 * `Retry-After`, and the others keep theirs. The route's throttle stays as the ceiling of what the function costs
 * (docs/throttling.md).
 */
import { admitInWindow } from '#shared/db/window-counter';

export const TOKEN_RATE_WINDOW_SECONDS = 60;
/** Requests a minute from one source address, whatever their credentials (counted before they are checked). */
export const TOKEN_REQUESTS_PER_SOURCE = 60;
/** Tokens a minute for one client (counted once its secret matched: another's wrong secrets cannot use them up). */
export const TOKENS_PER_CLIENT = 30;

const admit = (subject: string, limit: number, what: string) =>
  admitInWindow(subject, limit, TOKEN_RATE_WINDOW_SECONDS, what);

/** Counts a request from `sourceIp`; a 429 over its budget. */
export const admitSource = (sourceIp: string) =>
  admit(`x5-source#${sourceIp}`, TOKEN_REQUESTS_PER_SOURCE, 'token requests from one address');

/** Counts a token for the authenticated client `clientId`; a 429 over its budget. */
export const admitClient = (clientId: string) => admit(`x5-client#${clientId}`, TOKENS_PER_CLIENT, 'tokens per client');
