/**
 * The ES256 signing key. Locally it is generated once and kept in a file under .data/; in the cloud it lives in a
 * Secrets Manager secret which the first cold start fills in (a fixed ClientRequestToken makes concurrent first starts
 * agree on one key). The secret holds `{keys: [JWK…]}`; the first is active, the rest only verify (rotation).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { wire } from '#shared/aws/wire';
import { config } from '#shared/config';
import { newUuid } from '#shared/ids';
import { standsFor } from '#shared/local-invocation';

export interface SigningKeys {
  kid: string;
  privateKey: Awaited<ReturnType<typeof importJWK>>;
  publicJwks: JWK[];
}

interface StoredKeys {
  keys: JWK[];
}

let cached: Promise<SigningKeys> | undefined;

export function signingKeys(): Promise<SigningKeys> {
  // Loaded once per process; locally one process hosts every function, so each use stands for a cold start's read.
  if (!config.signingKeySecretArn) standsFor({ action: 'secretsmanager:GetSecretValue', resource: 'signingKeySecret' });
  cached ??= load().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

async function load(): Promise<SigningKeys> {
  const stored = config.signingKeySecretArn ? await fromSecret(config.signingKeySecretArn) : await fromFile();
  const [active] = stored.keys;
  if (!active?.kid) throw new Error('the signing key store holds no key');
  const privateKey = await importJWK(active, 'ES256');
  const publicJwks = stored.keys.map(({ d: _private, ...publicPart }) => ({ ...publicPart, use: 'sig', alg: 'ES256' }));
  return { kid: active.kid, privateKey, publicJwks };
}

export async function newKeySet(): Promise<StoredKeys> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { keys: [{ ...jwk, kid: newUuid(), alg: 'ES256', use: 'sig' }] };
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
    let parsed: Partial<StoredKeys> = {};
    try {
      parsed = JSON.parse(out.SecretString ?? '{}') as Partial<StoredKeys>;
    } catch {}
    return Array.isArray(parsed.keys) && parsed.keys.length > 0 ? (parsed as StoredKeys) : undefined;
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
