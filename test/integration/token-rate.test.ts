/**
 * X5's budgets are each source's and each client's own (issue 42 item 9): one noisy address, with wrong secrets or
 * right ones, is refused with 429 `rate_limited` and `Retry-After` once it has used its budget, while another
 * partner, from another address, still gets its tokens; a client minting tokens in a loop uses up its own budget
 * only, and another's wrong secrets cannot use it up.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { invoke } from '../support/invoke.ts';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { createClient } = await import('../../shared/tokens/clients.ts');
const { TOKEN_REQUESTS_PER_SOURCE, TOKENS_PER_CLIENT } = await import('../../shared/tokens/token-rate.ts');
const token = (await import('../../functions/tokens/token.ts')).handler;
const { resetClock, setClock } = await import('../../shared/clock.ts');

// The budgets are counted in fixed windows: each test runs at one moment, so a burst never straddles two windows.
beforeEach(() => {
  const pinned = Date.now();
  setClock(() => pinned);
});
afterEach(() => resetClock());

const newClient = async (name: string) => {
  const { client, secretKey } = await createClient({
    kind: 'internal',
    name,
    roles: ['ImportWorker'],
    orgId: null,
    createdBy: 'test',
  });
  return { key: client.client_key, secret: secretKey };
};
const basic = (key: string, secret: string) => `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;
type Answer = { bearer_token?: string; code?: string; detail?: string };
const ask = (key: string, secret: string, sourceIp: string) =>
  invoke<Answer>(token, {
    headers: { authorization: basic(key, secret) },
    body: { grant_type: 'client_credentials' },
    sourceIp,
  });

/** Sends `count` requests at once; their statuses. */
const burst = async (count: number, send: () => Promise<{ status: number }>) =>
  (await Promise.all(Array.from({ length: count }, send))).map((answer) => answer.status);

describe('X5 budgets per source and per client (issue 42 item 9)', () => {
  it('a noisy address is refused with 429 and Retry-After; a partner elsewhere still gets its token', async () => {
    const quiet = await newClient('quiet partner');
    const noisy = await newClient('noisy partner');
    const statuses = await burst(TOKEN_REQUESTS_PER_SOURCE + 5, () => ask(noisy.key, 'sk_wrong', '203.0.113.7'));
    expect(statuses.filter((s) => s === 401)).toHaveLength(TOKEN_REQUESTS_PER_SOURCE);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    const refused = await ask(noisy.key, noisy.secret, '203.0.113.7');
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.headers['Retry-After'] ?? refused.headers['retry-after'])).toBeGreaterThan(0);
    const served = await ask(quiet.key, quiet.secret, '198.51.100.20');
    expect(served.status).toBe(200);
    expect(served.body.bearer_token).toEqual(expect.any(String));
    // The noisy partner's own key still works from another address: its wrong secrets cost it nothing.
    expect((await ask(noisy.key, noisy.secret, '198.51.100.21')).status).toBe(200);
  });

  it("a client minting tokens in a loop uses up its own budget only; another's wrong secrets cannot", async () => {
    const looping = await newClient('looping worker');
    const other = await newClient('other worker');
    // Another address sends the other client's key with wrong secrets: counted against that address, not the client.
    await burst(20, () => ask(other.key, 'sk_wrong', '192.0.2.50'));
    const statuses = await burst(TOKENS_PER_CLIENT + 3, () => ask(looping.key, looping.secret, '192.0.2.1'));
    expect(statuses.filter((s) => s === 200)).toHaveLength(TOKENS_PER_CLIENT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    expect((await ask(looping.key, looping.secret, '192.0.2.2')).status).toBe(429);
    expect((await ask(other.key, other.secret, '192.0.2.1')).status).toBe(200);
  });
});
