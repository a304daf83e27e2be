/**
 * The page-token key (shared/http/page-tokens.ts): AES-256 by HKDF from a secret of its own, so that the list
 * functions, which seal and open page tokens, never read the token-signing key. In the cloud it is the
 * `PageTokenKey` secret CloudFormation generates (a random string, read once per container); locally a file under
 * .data/keys, made on first use.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { wire } from '#shared/aws/wire';
import { config } from '#shared/config';
import { standsFor } from '#shared/local-invocation';

let cached: Promise<Buffer> | undefined;

export function pageTokenKey(): Promise<Buffer> {
  // Loaded once per process; locally one process hosts every function, so each use stands for a cold start's read.
  if (!config.pageTokenSecretArn) standsFor({ action: 'secretsmanager:GetSecretValue', resource: 'pageTokenSecret' });
  cached ??= (config.pageTokenSecretArn ? fromSecret(config.pageTokenSecretArn) : fromFile()).then(derive, (error) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

const derive = (secret: string): Buffer =>
  Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), 'dispatch', 'dispatch page tokens v2', 32));

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
