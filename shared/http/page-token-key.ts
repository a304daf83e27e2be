/**
 * The page-token key (shared/http/page-tokens.ts): AES-256 by HKDF from a secret of its own, so that the list
 * functions, which seal and open page tokens, never read the token-signing key. In the cloud it is the
 * `PageTokenKey` secret CloudFormation generates (a random string, read once per container); locally a file under
 * .data/keys, made on first use. The tracking links' key (shared/tracking/links.ts) is derived from the same secret
 * under another HKDF label: the two keys are independent, and neither says anything of the other.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { wire } from '#shared/aws/wire';
import { config } from '#shared/config';
import { standsFor } from '#shared/local-invocation';

let cached: Promise<string> | undefined;

function secret(): Promise<string> {
  // Loaded once per process; locally one process hosts every function, so each use stands for a cold start's read.
  if (!config.pageTokenSecretArn) standsFor({ action: 'secretsmanager:GetSecretValue', resource: 'pageTokenSecret' });
  cached ??= (config.pageTokenSecretArn ? fromSecret(config.pageTokenSecretArn) : fromFile()).catch((error) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

const derive = (label: string) => (value: string) =>
  Buffer.from(hkdfSync('sha256', Buffer.from(value, 'utf8'), 'dispatch', label, 32));

/** The page tokens' AES-256 key. */
export const pageTokenKey = (): Promise<Buffer> => secret().then(derive('dispatch page tokens v2'));

/** The tracking links' HMAC key (a link's token is derived from its id with it: shared/tracking/links.ts). */
export const trackingLinkKey = (): Promise<Buffer> => secret().then(derive('dispatch tracking links v1'));

async function fromSecret(secretId: string): Promise<string> {
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const client = new SecretsManagerClient(wire());
  const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
  if (!out.SecretString) throw new Error('the page-token secret is empty');
  return out.SecretString;
}

function fromFile(): Promise<string> {
  const file = config.pageTokenKeyFile ?? '.data/keys/page-token.key';
  try {
    return Promise.resolve(readFileSync(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dirname(file), { recursive: true });
  try {
    const fresh = randomBytes(32).toString('base64url');
    writeFileSync(file, fresh, { flag: 'wx', mode: 0o600 });
    return Promise.resolve(fresh);
  } catch (error) {
    // Another process wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return Promise.resolve(readFileSync(file, 'utf8'));
    throw error;
  }
}
