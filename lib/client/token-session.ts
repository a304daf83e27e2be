/**
 * A signed-in session's tokens, renewed through T1 (`POST /v1/auth/refresh`) the way its rotation with reuse detection
 * needs (contract section 3; docs/driver-app.md):
 *
 * - One renewal in flight at a time: every caller that asks while one runs shares it (two renewals would present the
 *   same refresh token twice, and the second would be taken for a stolen token's reuse: the whole family revoked).
 * - The new refresh token replaces the old in the session (and `onTokens`, to persist it, is awaited) before any
 *   caller gets the new bearer token, so the old refresh token is never presented again.
 * - A 401 on renewal (the refresh token is retired, reused, revoked or unknown) means signing in again: the session
 *   ends (`SignInRequired`, `onSignedOut`), and every later renewal fails the same way without asking the service.
 * - Any other failure (no answer, a 5xx, a 429) leaves the tokens as they were: the next renewal tries again. (If the
 *   service rotated but its answer was lost, the old refresh token is retired: the next renewal is a 401.)
 *
 *   const session = new TokenSession({ baseUrl, tokens: await login(), onTokens: (t) => store.save(t) });
 *   const uploader = new LocationUploader({ baseUrl, token: session.token, storage });
 */

/** What A1 and T1 answer (and what `onTokens` gets to persist). */
export interface SessionTokens {
  bearer_token: string;
  refresh_token: string;
}

export interface TokenSessionOptions {
  baseUrl: string;
  tokens: SessionTokens;
  /** T1's `client_key`, for a session of a client credential. */
  clientKey?: string;
  /** Renew this long before the bearer token's `exp` when `token()` is asked (seconds; 60 by default). */
  renewBeforeS?: number;
  fetch?: typeof globalThis.fetch;
  /** The clock `token()` compares `exp` with (milliseconds). */
  now?: () => number;
  /** The new pair, before anyone gets it: persist it, it is the only refresh token that works from now on. */
  onTokens?: (tokens: SessionTokens) => void | Promise<void>;
  /** The refresh token was refused: the person must sign in again. */
  onSignedOut?: (error: SignInRequired) => void;
}

/** T1 refused the refresh token (401): the session is over; sign in again (A1). */
export class SignInRequired extends Error {
  readonly status = 401;
  constructor(readonly detail: string | undefined) {
    super(`sign in again: the refresh token was refused${detail ? ` (${detail})` : ''}`);
    this.name = 'SignInRequired';
  }
}

/** A renewal that failed for now (no answer, a 5xx, a 429): the tokens are unchanged, try again later. */
export class RenewalFailed extends Error {
  constructor(
    readonly status: number | 'network',
    readonly detail?: string,
  ) {
    super(`the token could not be renewed (${status}${detail ? `: ${detail}` : ''}); try again`);
    this.name = 'RenewalFailed';
  }
}

/** The `exp` of a JWT in milliseconds; undefined for a token that is no JWT. */
function expiryOf(token: string): number | undefined {
  try {
    const part = token.split('.')[1];
    if (!part) return undefined;
    const json = atob(
      part
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(part.length / 4) * 4, '='),
    );
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export class TokenSession {
  private current: SessionTokens;
  private renewal: Promise<string> | undefined;
  private ended: SignInRequired | undefined;
  private readonly send: typeof globalThis.fetch;
  private readonly now: () => number;

  constructor(private readonly options: TokenSessionOptions) {
    this.current = { ...options.tokens };
    this.send = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.now = options.now ?? Date.now;
  }

  /** The tokens as they stand (the newest pair). */
  get tokens(): Readonly<SessionTokens> {
    return this.current;
  }

  /** True once a renewal was refused: only signing in again helps. */
  get signedOut(): boolean {
    return this.ended !== undefined;
  }

  /**
   * The bearer token to send now: renewed first when it expires within `renewBeforeS` (or a renewal is running).
   * Bound, so it can be handed over as it is (`token: session.token`).
   */
  readonly token = async (): Promise<string> => {
    if (this.ended) throw this.ended;
    if (this.renewal) return this.renewal;
    const exp = expiryOf(this.current.bearer_token);
    if (exp !== undefined && exp - this.now() <= (this.options.renewBeforeS ?? 60) * 1000) return this.renew();
    return this.current.bearer_token;
  };

  /**
   * Renews the tokens (T1) and answers the new bearer token. Callers who ask while a renewal runs share it. `stale`,
   * the bearer token a request was refused with (401), makes a renewal only if it is still the current one: a caller
   * whose token was renewed meanwhile gets the new one without another renewal.
   */
  renew(stale?: string): Promise<string> {
    if (this.ended) return Promise.reject(this.ended);
    if (this.renewal) return this.renewal;
    if (stale !== undefined && stale !== this.current.bearer_token) return Promise.resolve(this.current.bearer_token);
    const renewal = this.exchange().finally(() => {
      this.renewal = undefined;
    });
    this.renewal = renewal;
    return renewal;
  }

  /**
   * A `fetch` that, when a request with a bearer token is answered 401, renews (sharing a renewal under way) and sends
   * it once more with the new token. Hand it to `dispatchClient`, `LocationUploader` or `TaskEventQueue` beside
   * `token`. A renewal that fails leaves the 401 as the answer (and `signedOut` says whether to sign in again).
   */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const again = input instanceof Request ? input.clone() : undefined;
    const response = await this.send(input, init);
    if (response.status !== 401) return response;
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    const sent = /^Bearer (.+)$/i.exec(headers.get('authorization') ?? '')?.[1];
    if (!sent) return response;
    let fresh: string;
    try {
      fresh = await this.renew(sent);
    } catch {
      return response;
    }
    headers.set('authorization', `Bearer ${fresh}`);
    return again ? this.send(new Request(again, { headers })) : this.send(input, { ...init, headers });
  };

  private async exchange(): Promise<string> {
    const body: Record<string, string> = { refresh_token: this.current.refresh_token };
    if (this.options.clientKey) body['client_key'] = this.options.clientKey;
    let response: Response;
    try {
      response = await this.send(`${this.options.baseUrl.replace(/\/$/, '')}/v1/auth/refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    } catch (error) {
      throw new RenewalFailed('network', (error as Error).message);
    }
    const reply = (await response.json().catch(() => undefined)) as
      | (Partial<SessionTokens> & { detail?: string })
      | undefined;
    if (response.status === 401) {
      this.ended = new SignInRequired(reply?.detail);
      this.options.onSignedOut?.(this.ended);
      throw this.ended;
    }
    if (!response.ok || typeof reply?.bearer_token !== 'string' || typeof reply.refresh_token !== 'string') {
      throw new RenewalFailed(response.status, reply?.detail);
    }
    // The old refresh token is retired from this moment: the new pair replaces it before anyone sees the new bearer.
    this.current = { bearer_token: reply.bearer_token, refresh_token: reply.refresh_token };
    await this.options.onTokens?.(this.current);
    return this.current.bearer_token;
  }
}
