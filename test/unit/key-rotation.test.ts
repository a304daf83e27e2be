/**
 * Issue 25.6: the signing-key rotation's state machine (shared/auth/key-rotation.ts) on a fake clock, and the bounded
 * key cache of every container (shared/auth/keys.ts): a key the rotation lists is verified everywhere before it
 * signs anywhere, and a retired key verifies until every token it signed has expired.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DROP_AFTER_MS,
  KEY_CACHE_TTL_MS,
  type KeySet,
  MAX_TOKEN_LIFETIME_MS,
  PROMOTE_AFTER_MS,
  ROTATION_INTERVAL_DAYS,
  rotateKeySet,
  rotationProblem,
  type StoredKey,
} from '../../shared/auth/key-rotation.ts';
import { newSigningKey, signingKeys } from '../../shared/auth/keys.ts';
import { issueBearerToken, verifyBearerToken } from '../../shared/auth/tokens.ts';
import { resetClock, setClock } from '../../shared/clock.ts';

const T0 = Date.parse('2026-03-01T00:00:00Z');
const MINUTE = 60_000;
const fresh = async () => (await newSigningKey()) as StoredKey;
const states = (set: KeySet) => set.keys.map((key) => `${key.kid}:${key.state}`);

describe('the rotation state machine', () => {
  it('lists a new key verify-only, promotes it only once every cache holds it, drops the old one after its last token', async () => {
    const [k1, k2, k3] = [await fresh(), await fresh(), await fresh()];
    const first = rotateKeySet(undefined, T0, k1).set;
    expect(states(first)).toEqual([`${k1.kid}:current`]);

    // Step 1: k2 is listed, k1 still signs.
    const listed = rotateKeySet(first, T0 + MINUTE, k2);
    expect(states(listed.set)).toEqual([`${k1.kid}:current`, `${k2.kid}:next`]);
    expect(listed.changes).toEqual([`added ${k2.kid}`]);

    // Run again before a cache can have expired (a retried or manual rotation): nothing moves, nothing is added.
    const early = rotateKeySet(listed.set, T0 + MINUTE + PROMOTE_AFTER_MS - 1, k3);
    expect(states(early.set)).toEqual(states(listed.set));
    expect(early.changes).toEqual([]);

    // Step 2: k2 has been listed longer than a cache lives: it signs, k1 verifies, k3 is listed.
    const promotedAt = T0 + MINUTE + PROMOTE_AFTER_MS;
    const promoted = rotateKeySet(listed.set, promotedAt, k3);
    expect(states(promoted.set)).toEqual([`${k2.kid}:current`, `${k3.kid}:next`, `${k1.kid}:previous`]);
    expect(promoted.changes.sort()).toEqual([`added ${k3.kid}`, `promoted ${k2.kid}`, `retired ${k1.kid}`]);

    // k1 stays while a token it signed (in a container whose cache still had it current) can be alive.
    const k4 = await fresh();
    const kept = rotateKeySet(promoted.set, promotedAt + KEY_CACHE_TTL_MS + MAX_TOKEN_LIFETIME_MS, k4);
    expect(kept.set.keys.map((key) => key.kid)).toContain(k1.kid);
    const dropped = rotateKeySet(promoted.set, promotedAt + DROP_AFTER_MS, k4);
    expect(dropped.set.keys.map((key) => key.kid)).not.toContain(k1.kid);
    expect(dropped.changes[0]).toBe(`dropped ${k1.kid}`);
    expect(rotationProblem(promoted.set, dropped.set, promotedAt + DROP_AFTER_MS)).toBeNull();
  });

  it('reads a set from before the states: its first key signs, the others verify and go in time', async () => {
    const [a, b, c] = [await fresh(), await fresh(), await fresh()];
    const { set } = rotateKeySet({ keys: [a, b] }, T0, c);
    expect(states(set)).toEqual([`${a.kid}:current`, `${c.kid}:next`, `${b.kid}:previous`]);
    expect(rotationProblem({ keys: [a, b] }, set, T0)).toBeNull();
  });

  it('one step per scheduled run is enough: the interval is longer than a cache and a token live together', () => {
    expect(ROTATION_INTERVAL_DAYS * 24 * 60 * MINUTE).toBeGreaterThan(DROP_AFTER_MS);
    expect(PROMOTE_AFTER_MS).toBeGreaterThan(KEY_CACHE_TTL_MS);
  });

  it('testSecret refuses a pending set that loses a live key, signs with two keys or holds a bad key', async () => {
    const [k1, k2] = [await fresh(), await fresh()];
    const current = rotateKeySet(rotateKeySet(undefined, T0, k1).set, T0, k2).set;
    const now = T0 + MINUTE;
    expect(rotationProblem(current, { keys: current.keys.filter((key) => key.kid !== k2.kid) }, now)).toMatch(
      /drops next key/,
    );
    expect(rotationProblem(current, { keys: current.keys.map((key) => ({ ...key, state: 'current' })) }, now)).toMatch(
      /2 current keys/,
    );
    const { d: _d, ...publicOnly } = k2;
    expect(
      rotationProblem(current, { keys: [current.keys[0]!, { ...publicOnly, kid: k2.kid, state: 'next' }] }, now),
    ).toMatch(/not an ES256 private key/);
    expect(rotationProblem(current, current, now)).toBeNull();
  });
});

describe('the key cache of a container (bounded)', () => {
  let file: string;
  const caller = { kind: 'user' as const, id: '5f1c7a3e-8d2b-4f6a-9c1e-2b3d4e5f6a7b', roles: [], orgId: null };
  beforeAll(() => {
    file = join(mkdtempSync(join(tmpdir(), 'keys-')), 'signing-keys.json');
    process.env['SIGNING_KEY_FILE'] = file;
  });
  afterEach(() => resetClock());

  it('reads the key set again after the cache period: a key listed elsewhere verifies, and one promoted signs', async () => {
    let now = Date.now();
    setClock(() => now);
    const before = await signingKeys();
    const stored = JSON.parse(readFileSync(file, 'utf8')) as KeySet;

    // Another container's rotation lists k2 and, a cache period later, promotes it.
    const k2 = await fresh();
    const listed = rotateKeySet(stored, now, k2).set;
    writeFileSync(file, JSON.stringify(listed));
    now += MINUTE;
    expect((await signingKeys()).publicJwks.map((key) => key.kid)).toEqual(before.publicJwks.map((key) => key.kid));
    now += KEY_CACHE_TTL_MS;
    const refreshed = await signingKeys();
    expect(refreshed.publicJwks.map((key) => key.kid)).toContain(k2.kid);
    // The public keys carry no private part and no rotation bookkeeping.
    expect(refreshed.publicJwks.every((key) => !('d' in key) && !('state' in key))).toBe(true);
    expect(refreshed.kid).toBe(before.kid);

    // A token signed with k2 by a container that read the promoted set verifies here, without a restart.
    const promoted = rotateKeySet(listed, now + PROMOTE_AFTER_MS, await fresh()).set;
    writeFileSync(file, JSON.stringify(promoted));
    const oldToken = await issueBearerToken(caller, 1);
    now += KEY_CACHE_TTL_MS;
    const newToken = await issueBearerToken(caller, 1);
    expect((await signingKeys()).kid).toBe(k2.kid);
    const header = (token: string) => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as object;
    expect(header(newToken.bearer_token)).toMatchObject({ kid: k2.kid });
    expect(header(oldToken.bearer_token)).toMatchObject({ kid: before.kid });
    await expect(verifyBearerToken(newToken.bearer_token)).resolves.toMatchObject({ id: caller.id });
    await expect(verifyBearerToken(oldToken.bearer_token)).resolves.toMatchObject({ id: caller.id });
  });
});
