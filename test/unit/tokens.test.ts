import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signingKeys } from '../../shared/auth/keys.ts';
import { hashPassword, verifyPassword } from '../../shared/auth/passwords.ts';
import { issueBearerToken, verifyBearerToken } from '../../shared/auth/tokens.ts';
import { resetClock, setClock } from '../../shared/clock.ts';

const caller = {
  kind: 'user' as const,
  id: '5f1c7a3e-8d2b-4f6a-9c1e-2b3d4e5f6a7b',
  roles: ['OrgAdmin' as const],
  orgId: null,
};

beforeAll(() => {
  process.env['SIGNING_KEY_FILE'] = join(mkdtempSync(join(tmpdir(), 'keys-')), 'signing-keys.json');
});
afterEach(() => resetClock());

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function claims(overrides: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: caller.id,
    roles: ['SysAdmin'],
    kind: 'user',
    gen: 1,
    iss: 'https://dispatch.internal',
    aud: 'dispatch-api',
    iat: now,
    exp: now + 600,
    jti: 'j',
    ...overrides,
  };
}

describe('bearer tokens', () => {
  it('round-trips the caller, generation and a one-hour expiry', async () => {
    const issued = await issueBearerToken(caller, 3);
    const verified = await verifyBearerToken(issued.bearer_token);
    expect(verified).toMatchObject({ ...caller, generation: 3 });
    expect(issued.bearer_token_expired_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(3590);
    const [header] = issued.bearer_token.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toMatchObject({
      alg: 'ES256',
      kid: (await signingKeys()).kid,
    });
  });

  it('rejects a tampered payload', async () => {
    const [header, , signature] = (await issueBearerToken(caller, 1)).bearer_token.split('.');
    const forged = `${header}.${b64(await claims())}.${signature}`;
    await expect(verifyBearerToken(forged)).rejects.toThrow();
  });

  it('rejects an expired token', async () => {
    const token = (await issueBearerToken(caller, 1)).bearer_token;
    setClock(() => Date.now() + 2 * 3600 * 1000);
    await expect(verifyBearerToken(token)).rejects.toThrow();
  });

  it('rejects alg none', async () => {
    const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(await claims())}.`;
    await expect(verifyBearerToken(unsigned)).rejects.toThrow();
  });

  it('rejects HS256, even keyed with the public key', async () => {
    const publicJwk = (await signingKeys()).publicJwks[0]!;
    const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
    const token = await new SignJWT(await claims())
      .setProtectedHeader({ alg: 'HS256', kid: publicJwk.kid })
      .sign(secret);
    await expect(verifyBearerToken(token)).rejects.toThrow();
  });

  it('rejects a token signed by an unknown key, and a wrong issuer or audience', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = (await signingKeys()).kid;
    const foreign = await new SignJWT(await claims()).setProtectedHeader({ alg: 'ES256', kid }).sign(privateKey);
    await expect(verifyBearerToken(foreign)).rejects.toThrow();
    expect((await exportJWK(privateKey)).d).toBeDefined();
    const { privateKey: ours } = { privateKey: (await signingKeys()).privateKey };
    for (const override of [{ iss: 'https://evil.example' }, { aud: 'another-api' }]) {
      const token = await new SignJWT(await claims(override)).setProtectedHeader({ alg: 'ES256', kid }).sign(ours);
      await expect(verifyBearerToken(token)).rejects.toThrow();
    }
  });
});

describe('passwords', () => {
  it('hashes with argon2id at OWASP parameters and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('wrong horse battery', hash)).toBe(false);
    expect(await verifyPassword('anything', undefined)).toBe(false);
  });
});

describe('the authorizer (cached by API Gateway) and the handler kit', () => {
  it('annotates a good token with gen and exp, and a bad one as no caller, without reading any table', async () => {
    const { annotate } = await import('../../shared/auth/authorizer.ts');
    const issued = await issueBearerToken(caller, 4);
    expect(await annotate(`Bearer ${issued.bearer_token}`)).toEqual({
      authenticated: 'true',
      kind: 'user',
      id: caller.id,
      roles: 'OrgAdmin',
      org_id: '',
      gen: '4',
      exp: String(issued.bearer_token_expired_at),
    });
    expect(await annotate('Bearer not.a.token')).toEqual({ authenticated: 'false' });
    expect(await annotate(undefined)).toEqual({ authenticated: 'false' });
  });

  it('re-checks exp from the annotation, since the gateway may serve a cached answer past the token’s expiry', async () => {
    const { annotate, resolveCaller } = await import('../../shared/auth/authorizer.ts');
    const issued = await issueBearerToken(caller, 4);
    const { gen: _gen, ...context } = await annotate(`Bearer ${issued.bearer_token}`);
    expect(await resolveCaller(context, `Bearer ${issued.bearer_token}`)).toMatchObject({ id: caller.id });
    setClock(() => (issued.bearer_token_expired_at + 1) * 1000);
    await expect(resolveCaller(context, `Bearer ${issued.bearer_token}`)).rejects.toMatchObject({
      kind: 'unauthenticated',
      message: expect.stringMatching(/^the bearer token expired at /),
    });
  });

  it('annotates an expired token of ours as such, so that its 401 can say so (issue 46.9)', async () => {
    const { annotate } = await import('../../shared/auth/authorizer.ts');
    const issued = await issueBearerToken(caller, 4);
    setClock(() => (issued.bearer_token_expired_at + 1) * 1000);
    expect(await annotate(`Bearer ${issued.bearer_token}`)).toEqual({
      authenticated: 'false',
      refused: 'expired',
      kind: 'user',
      exp: String(issued.bearer_token_expired_at),
    });
  });
});
