/**
 * Encrypts secrets the service must be able to use again later (a partner's webhook signing secret). In the cloud a
 * KMS key: the functions that store the secret may only encrypt, only the webhook delivery function may decrypt.
 * Locally AES-256-GCM with a key generated once under .data/keys.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { wire } from '#shared/aws/wire';
import { standsFor } from '#shared/local-invocation';

export interface SecretBox {
  seal(plaintext: string): Promise<string>;
  open(sealed: string): Promise<string>;
}

export function localSecretBox(keyFile: string): SecretBox {
  let key: Buffer | undefined;
  const load = (): Buffer => {
    if (key) return key;
    try {
      key = Buffer.from(readFileSync(keyFile, 'utf8'), 'base64');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      mkdirSync(dirname(keyFile), { recursive: true });
      try {
        writeFileSync(keyFile, randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 });
      } catch (raced) {
        if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
      }
      key = Buffer.from(readFileSync(keyFile, 'utf8'), 'base64');
    }
    return key;
  };
  return {
    async seal(plaintext) {
      standsFor({ action: 'kms:Encrypt', resource: 'secretBoxKey' });
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', load(), iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `local:v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    async open(sealed) {
      standsFor({ action: 'kms:Decrypt', resource: 'secretBoxKey' });
      const raw = Buffer.from(sealed.replace(/^local:v1:/, ''), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', load(), raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

export function kmsSecretBox(keyId: string): SecretBox {
  const kms = import('@aws-sdk/client-kms').then((sdk) => ({ sdk, client: new sdk.KMSClient(wire()) }));
  return {
    async seal(plaintext) {
      const { sdk, client } = await kms;
      const out = await client.send(
        new sdk.EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plaintext, 'utf8') }),
      );
      return `kms:v1:${Buffer.from(out.CiphertextBlob!).toString('base64')}`;
    },
    async open(sealed) {
      const { sdk, client } = await kms;
      const out = await client.send(
        new sdk.DecryptCommand({ KeyId: keyId, CiphertextBlob: Buffer.from(sealed.replace(/^kms:v1:/, ''), 'base64') }),
      );
      return Buffer.from(out.Plaintext!).toString('utf8');
    },
  };
}

let box: SecretBox | undefined;

export function secretBox(): SecretBox {
  if (!box) {
    const kmsKey = process.env['SECRET_BOX_KMS_KEY_ID'];
    if (kmsKey) box = kmsSecretBox(kmsKey);
    else if (process.env['DISPATCH_LOCAL'] === '1') {
      box = localSecretBox(process.env['SECRET_BOX_KEY_FILE'] ?? '.data/keys/secret-box.key');
    } else throw new Error('missing required environment variable SECRET_BOX_KMS_KEY_ID');
  }
  return box;
}
