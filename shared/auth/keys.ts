/**
 * The ES256 signing key. Locally it is generated once and kept in a file under .data/; in the cloud it lives in a
 * Secrets Manager secret which the first cold start fills in (a fixed ClientRequestToken makes concurrent first starts
 * agree on one key). The secret holds `{keys: [JWK…]}`, each key with a state (shared/auth/key-rotation.ts): the
 * `current` one signs, every listed key verifies. A container keeps the set for at most `KEY_CACHE_TTL_MS` and then
 * reads it again, so that a key the rotation adds is verified everywhere before it signs anywhere.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { KEY_CACHE_TTL_MS, type KeySet, parseKeySet, signingKeyOf } from '#shared/auth/key-rotation';
import { wire } from '#shared/aws/wire';
import { clock } from '#shared/clock';
import { config } from '#shared/config';
import { newUuid } from '#shared/ids';
import { standsFor } from '#shared/local-invocation';

export interface SigningKeys {
  kid: string;
  privateKey: Awaited<ReturnType<typeof importJWK>>;
  publicJwks: JWK[];
}

type StoredKeys = KeySet;

let cached: { loadedAt: number; keys: Promise<SigningKeys> } | undefined;

export function signingKeys(): Promise<SigningKeys> {
  // Loaded once per cache period; locally one process hosts every function, so each use stands for a container's read.
  if (!config.signingKeySecretArn) standsFor({ action: 'secretsmanager:GetSecretValue', resource: 'signingKeySecret' });
  const now = clock.nowMs();
  // Bounded: a key set older than the cache period is read again (a clock moved back counts as expired too).
  if (!cached || now - cached.loadedAt >= KEY_CACHE_TTL_MS || now < cached.loadedAt) {
    const loading = load().catch((error: unknown) => {
      if (cached?.keys === loading) cached = undefined;
      throw error;
    });
    cached = { loadedAt: now, keys: loading };
  }
  return cached.keys;
}

async function load(): Promise<SigningKeys> {
  const stored = config.signingKeySecretArn ? await fromSecret(config.signingKeySecretArn) : await fromFile();
  const active = signingKeyOf(stored);
  if (!active?.kid) throw new Error('the signing key store holds no key');
  const privateKey = await importJWK(active, 'ES256');
  const publicJwks = stored.keys.map(
    ({ d: _private, state: _state, created_at: _c, promoted_at: _p, retired_at: _r, ...publicPart }): JWK => ({
      ...publicPart,
      use: 'sig',
      alg: 'ES256',
    }),
  );
  return { kid: active.kid, privateKey, publicJwks };
}

/** A fresh ES256 key pair as the secret stores it (private JWK with kid), without a state. */
export async function newSigningKey() {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: newUuid(), alg: 'ES256', use: 'sig' };
}

export async function newKeySet(): Promise<StoredKeys> {
  const now = clock.nowIso();
  return { keys: [{ ...(await newSigningKey()), state: 'current', created_at: now, promoted_at: now }] };
}

async function fromFile(): Promise<StoredKeys> {
  const file = config.signingKeyFile ?? '.data/keys/signing-keys.json';
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as StoredKeys;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const fresh = await newKeySet();
  mkdirSync(dirname(file), { recursive: true });
  try {
    writeFileSync(file, JSON.stringify(fresh), { flag: 'wx', mode: 0o600 });
    return fresh;
  } catch (error) {
    // Another process wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return JSON.parse(readFileSync(file, 'utf8')) as StoredKeys;
    throw error;
  }
}

async function fromSecret(secretId: string): Promise<StoredKeys> {
  const { SecretsManagerClient, GetSecretValueCommand, PutSecretValueCommand } = await import(
    '@aws-sdk/client-secrets-manager'
  );
  const client = new SecretsManagerClient(wire());
  const read = async (): Promise<StoredKeys | undefined> => {
    const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    // A new secret holds whatever CloudFormation generated (a random string, not JSON) until the first fill.
    return parseKeySet(out.SecretString);
  };
  const existing = await read();
  if (existing) return existing;
  try {
    await client.send(
      new PutSecretValueCommand({
        SecretId: secretId,
        SecretString: JSON.stringify(await newKeySet()),
        ClientRequestToken: 'dispatch-initial-signing-key-0000000001',
      }),
    );
  } catch (error) {
    const name = (error as { name?: string }).name;
    // A function that only verifies may not fill the secret (its role reads it): it waits for a signer to.
    if (name !== 'ResourceExistsException' && name !== 'InvalidRequestException' && name !== 'AccessDeniedException') {
      throw error;
    }
  }
  const settled = await read();
  if (!settled) throw new Error('the signing key secret could not be initialised');
  return settled;
}
