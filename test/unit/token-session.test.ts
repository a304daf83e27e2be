import { describe, expect, it } from 'vitest';
import { RenewalFailed, SignInRequired, TokenSession } from '../../lib/client/token-session.ts';

const jwt = (exp: number, n: number) => `h.${Buffer.from(JSON.stringify({ exp, n })).toString('base64url')}.s`;

/**
 * T1 as the service does it: single-use refresh tokens in one family; presenting a retired one revokes the family
 * (every later refresh is a 401). Other paths answer 200 to the current bearer token, 401 to any other.
 */
function fakeService(options: { expInS?: number; failNext?: number } = {}) {
  let n = 0;
  let live = 'r0';
  let bearer = jwt(2_000_000_000, 0);
  let revoked = false;
  let failNext = options.failNext ?? 0;
  const refreshes: string[] = [];
  const calls: { path: string; authorization: string | null }[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    calls.push({ path, authorization: request.headers.get('authorization') });
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (path === '/v1/auth/refresh') {
      const { refresh_token } = (await request.json()) as { refresh_token: string };
      refreshes.push(refresh_token);
      if (failNext > 0) {
        failNext--;
        return Response.json({ detail: 'busy' }, { status: 503 });
      }
      if (revoked || refresh_token !== live) {
        revoked = true;
        return Response.json({ detail: 'this refresh token was used already: the family is revoked' }, { status: 401 });
      }
      n++;
      live = `r${n}`;
      bearer = jwt(options.expInS ?? 2_000_000_000, n);
      return Response.json({ bearer_token: bearer, refresh_token: live });
    }
    return request.headers.get('authorization') === `Bearer ${bearer}`
      ? Response.json({ ok: true })
      : Response.json({ detail: 'the bearer token expired' }, { status: 401 });
  };
  return {
    fetch,
    refreshes,
    calls,
    expireBearer: () => {
      bearer = 'expired-by-the-service';
    },
    get revoked() {
      return revoked;
    },
  };
}

const baseUrl = 'http://dispatch.test';

describe('TokenSession (T1 rotation with reuse detection)', () => {
  it('renews once for every caller that asks at the same time, and never presents a retired refresh token', async () => {
    const service = fakeService();
    const session = new TokenSession({
      baseUrl,
      tokens: { bearer_token: 'b0', refresh_token: 'r0' },
      fetch: service.fetch,
    });
    const tokens = await Promise.all([session.renew(), session.renew(), session.renew('b0'), session.renew()]);
    expect(new Set(tokens).size).toBe(1);
    expect(service.refreshes).toEqual(['r0']);
    expect(session.tokens.refresh_token).toBe('r1');
    // A caller refused with the token renewed meanwhile gets the new one, without another renewal.
    expect(await session.renew('b0')).toBe(tokens[0]);
    expect(service.refreshes).toEqual(['r0']);
    // The next renewal presents the new refresh token: the family stands.
    await session.renew();
    expect(service.refreshes).toEqual(['r0', 'r1']);
    expect(service.revoked).toBe(false);
  });

  it('hands the new pair to onTokens before any caller gets the new bearer token', async () => {
    const service = fakeService();
    const order: string[] = [];
    const session = new TokenSession({
      baseUrl,
      tokens: { bearer_token: 'b0', refresh_token: 'r0' },
      fetch: service.fetch,
      onTokens: async (tokens) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(`stored ${tokens.refresh_token}`);
      },
    });
    await Promise.all([
      session.renew().then(() => order.push('caller 1')),
      session.renew().then(() => order.push('caller 2')),
    ]);
    expect(order).toEqual(['stored r1', 'caller 1', 'caller 2']);
  });

  it('retries 401s of requests sent at once with one renewal between them (session.fetch)', async () => {
    const service = fakeService();
    const session = new TokenSession({
      baseUrl,
      tokens: { bearer_token: 'b0', refresh_token: 'r0' },
      fetch: service.fetch,
    });
    const get = () =>
      session.fetch(`${baseUrl}/v1/driver/offers`, {
        headers: { authorization: `Bearer ${session.tokens.bearer_token}` },
      });
    const viaRequest = () =>
      session.fetch(
        new Request(`${baseUrl}/v1/driver/locations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${session.tokens.bearer_token}` },
          body: '{"locations":[]}',
        }),
      );
    const answers = await Promise.all([get(), get(), viaRequest()]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(service.refreshes).toEqual(['r0']);
  });

  it('ends the session on a 401 from T1: sign in again, and the service is not asked again', async () => {
    const service = fakeService();
    const ended: SignInRequired[] = [];
    const session = new TokenSession({
      baseUrl,
      tokens: { bearer_token: 'b0', refresh_token: 'stolen-and-used' },
      fetch: service.fetch,
      onSignedOut: (error) => ended.push(error),
    });
    const first = await Promise.allSettled([session.renew(), session.renew()]);
    expect(first.map((r) => r.status === 'rejected' && r.reason instanceof SignInRequired)).toEqual([true, true]);
    expect(ended).toHaveLength(1);
    expect(ended[0]!.detail).toContain('family is revoked');
    expect(session.signedOut).toBe(true);
    await expect(session.token()).rejects.toBeInstanceOf(SignInRequired);
    await expect(session.renew()).rejects.toBeInstanceOf(SignInRequired);
    expect(service.refreshes).toEqual(['stolen-and-used']);
    // A request refused meanwhile keeps its 401.
    service.expireBearer();
    const answer = await session.fetch(`${baseUrl}/v1/driver/offers`, { headers: { authorization: 'Bearer b0' } });
    expect(answer.status).toBe(401);
  });

  it('keeps the tokens after a failure for now (503) and renews with the same refresh token next time', async () => {
    const service = fakeService({ failNext: 1 });
    const session = new TokenSession({
      baseUrl,
      tokens: { bearer_token: 'b0', refresh_token: 'r0' },
      fetch: service.fetch,
    });
    const failure = await session.renew().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RenewalFailed);
    expect((failure as RenewalFailed).status).toBe(503);
    expect(session.tokens).toEqual({ bearer_token: 'b0', refresh_token: 'r0' });
    await session.renew();
    expect(service.refreshes).toEqual(['r0', 'r0']);
    expect(session.tokens.refresh_token).toBe('r1');
  });

  it('renews before the bearer token expires when asked for a token', async () => {
    const service = fakeService({ expInS: 10_000 + 3600 });
    const now = 10_000_000;
    const session = new TokenSession({
      baseUrl,
      tokens: { bearer_token: jwt(10_000 + 30, 0), refresh_token: 'r0' },
      fetch: service.fetch,
      now: () => now,
    });
    const [a, b] = await Promise.all([session.token(), session.token()]);
    expect(a).toBe(b);
    expect(a).toBe(session.tokens.bearer_token);
    expect(service.refreshes).toEqual(['r0']);
    // An hour left: the token is used as it is.
    expect(await session.token()).toBe(a);
    expect(service.refreshes).toEqual(['r0']);
  });
});
