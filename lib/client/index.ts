/**
 * A typed client for the Dispatch API: openapi-fetch over the types generated from the OpenAPI document
 * (`lib/client/schema.ts`), so every path, parameter, body and reply is checked by the compiler.
 *
 *   const { data } = await dispatchClient(url).POST('/v1/auth/login', { body: { user: { email, password } } });
 *   const api = dispatchClient(url, data!.bearer_token);
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.ts';

export type { paths } from './schema.ts';

export type DispatchClient = Client<paths>;

/**
 * A client for `baseUrl` that sends `bearerToken` (if any) with every call. `fetch` replaces the global one (a
 * retrying fetch, say: `retryingFetch`).
 */
export function dispatchClient(baseUrl: string, bearerToken?: string, fetch?: typeof globalThis.fetch): DispatchClient {
  return createClient<paths>({
    baseUrl,
    headers: bearerToken ? { authorization: `Bearer ${bearerToken}` } : {},
    ...(fetch ? { fetch } : {}),
  });
}

export interface RetryTally {
  /** Every attempt, retries included. */
  requests: number;
  retries: number;
  /** Attempts by answer status (`network` for no answer). */
  statuses: Record<string, number>;
}

/**
 * What the contract asks of a client (section 2, and docs/failure-behaviour.md): every POST carries an
 * `Idempotency-Key` (one per logical call, kept across its retries); a 503, a 429 or a 409 "still in progress" is
 * retried after `Retry-After` (scaled by `retryAfterScale`), and so is a request that got no answer at all; other
 * answers are returned as they are. `tally` counts what happened.
 */
export function retryingFetch(
  options: { attempts?: number; retryAfterScale?: number; tally?: RetryTally; fetch?: typeof globalThis.fetch } = {},
): typeof globalThis.fetch {
  const attempts = options.attempts ?? 30;
  const scale = options.retryAfterScale ?? 1;
  const inner = options.fetch ?? globalThis.fetch;
  const tally = options.tally;
  return async (input, init) => {
    const original = new Request(input, init);
    if (original.method === 'POST' && !original.headers.has('idempotency-key')) {
      original.headers.set('idempotency-key', crypto.randomUUID());
    }
    const body = original.body ? await original.arrayBuffer() : undefined;
    for (let attempt = 1; ; attempt++) {
      const request = new Request(original, body === undefined ? {} : { body });
      if (tally) {
        tally.requests++;
        if (attempt > 1) tally.retries++;
      }
      let response: Response | undefined;
      try {
        response = await inner(request);
      } catch (error) {
        if (tally) tally.statuses['network'] = (tally.statuses['network'] ?? 0) + 1;
        if (attempt >= attempts) throw error;
      }
      if (response) {
        if (tally) tally.statuses[response.status] = (tally.statuses[response.status] ?? 0) + 1;
        const inProgress = response.status === 409 && response.headers.has('retry-after');
        if (attempt >= attempts || !(response.status === 503 || response.status === 429 || inProgress)) {
          return response;
        }
        await response.body?.cancel();
      }
      const wait = Number(response?.headers.get('retry-after') ?? 1);
      await new Promise((resolve) => setTimeout(resolve, (Number.isFinite(wait) ? wait : 1) * 1000 * scale));
    }
  };
}

/** The data of a call that succeeded; a failed call throws with its status and problem. */
export function must<T>(reply: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (reply.error !== undefined || reply.data === undefined) {
    throw new Error(`${what}: ${reply.response.status} ${JSON.stringify(reply.error)}`);
  }
  return reply.data;
}

/**
 * Local mode: an invited person joins as they would, reading the invitation from the mail outbox (`/_local/outbox`),
 * accepting it, and logging in. Returns the login reply.
 */
export async function joinFromOutbox(
  baseUrl: string,
  email: string,
  name: string,
  password: string,
  fetch: typeof globalThis.fetch = globalThis.fetch,
) {
  const outbox = (await (await fetch(`${baseUrl}/_local/outbox?to=${encodeURIComponent(email)}`)).json()) as {
    messages: { data: Record<string, string> }[];
  };
  const anonymous = dispatchClient(baseUrl, undefined, fetch);
  const invitation_token = outbox.messages[0]?.data['invitation_token'] ?? '';
  must(
    await anonymous.POST('/v1/auth/accept-invitation', { body: { user: { name, password, invitation_token } } }),
    `accept the invitation of ${email}`,
  );
  return must(await anonymous.POST('/v1/auth/login', { body: { user: { email, password } } }), `log in as ${email}`);
}

export {
  type ClientFrame,
  type DriverEvents,
  type DriverPosition,
  type EventFrame,
  isEvent,
  type OrgEvents,
  type PlanningEvents,
  type ServerFrame,
  type TaskReport,
} from './events.ts';
export {
  type Fix,
  type FlushResult,
  LocationUploader,
  MAX_FIXES_PER_REQUEST,
  type RecordOutcome,
  type UploaderClock,
  type UploaderOptions,
  type UploaderStats,
  type UploaderStorage,
} from './location-uploader.ts';
export {
  type QueuedTaskEvent,
  type TaskEventBody,
  TaskEventQueue,
  type TaskEventQueueOptions,
  type TaskEventStats,
  type TaskEventStorage,
} from './task-event-queue.ts';
export {
  RenewalFailed,
  type SessionTokens,
  SignInRequired,
  TokenSession,
  type TokenSessionOptions,
} from './token-session.ts';
export { UPLOADER_DEFAULTS } from './uploader-defaults.ts';
