// The signing-key secret's rotation function (issue 25.6; docs/key-rotation.md), which Secrets Manager invokes on
// the rotation schedule once per step. createSecret stores the next key set (shared/auth/key-rotation.ts: list a
// new key, promote a listed one, drop a retired one) as AWSPENDING; setSecret has nothing to do, the service being
// the only user of the keys; testSecret checks the pending set signs and keeps every key a live token needs;
// finishSecret checks it again and makes it AWSCURRENT. Each step may run again (Secrets Manager retries): each is
// idempotent. What AWSPENDING holds when Secrets Manager runs testSecret alone (its check of a new schedule) is not
// documented: testSecret then tests the set a rotation would create instead, and finishSecret never makes current
// anything but a key set that passes the same checks.
import { CompactSign, compactVerify, importJWK } from 'jose';
import {
  type KeySet,
  parseKeySet,
  rotateKeySet,
  rotationProblem,
  type StoredKey,
  signingKeyOf,
} from '#shared/auth/key-rotation';
import { newSigningKey } from '#shared/auth/keys';
import { wire } from '#shared/aws/wire';
import { clock } from '#shared/clock';
import { config } from '#shared/config';
import { logger } from '#shared/log';

export interface RotationEvent {
  SecretId: string;
  ClientRequestToken: string;
  Step: 'createSecret' | 'setSecret' | 'testSecret' | 'finishSecret';
}

export const handler = async (event: RotationEvent): Promise<{ step: string; changes?: string[] }> => {
  const {
    SecretsManagerClient,
    DescribeSecretCommand,
    GetSecretValueCommand,
    PutSecretValueCommand,
    UpdateSecretVersionStageCommand,
  } = await import('@aws-sdk/client-secrets-manager');
  const { SecretId: secretId, ClientRequestToken: token, Step: step } = event;
  // Only the signing-key secret: the function's role reaches no other, and a misdirected schedule fails loudly.
  if (config.signingKeySecretArn && !sameSecret(secretId, config.signingKeySecretArn)) {
    throw new Error(`this function rotates ${config.signingKeySecretArn}, not ${secretId}`);
  }
  const client = new SecretsManagerClient(wire());
  const described = await client.send(new DescribeSecretCommand({ SecretId: secretId }));
  const stages = described.VersionIdsToStages ?? {};
  const stagesOfToken = stages[token];
  if (!stagesOfToken) throw new Error(`secret version ${token} has no stage for rotation`);
  if (stagesOfToken.includes('AWSCURRENT')) return { step };
  if (!stagesOfToken.includes('AWSPENDING')) throw new Error(`secret version ${token} is not AWSPENDING`);
  const readValue = async (stage: 'AWSCURRENT' | 'AWSPENDING'): Promise<string | undefined> => {
    const out = await client.send(
      new GetSecretValueCommand({
        SecretId: secretId,
        VersionStage: stage,
        ...(stage === 'AWSPENDING' ? { VersionId: token } : {}),
      }),
    );
    return out.SecretString;
  };
  const read = async (stage: 'AWSCURRENT' | 'AWSPENDING'): Promise<KeySet | undefined> =>
    parseKeySet(await readValue(stage));
  /** The pending version's value; undefined for a version with no value yet (an empty pending version). */
  const readPendingValue = async (): Promise<string | undefined> => {
    try {
      return await readValue('AWSPENDING');
    } catch (error) {
      if ((error as { name?: string }).name === 'ResourceNotFoundException') return undefined;
      throw error;
    }
  };
  switch (step) {
    case 'createSecret': {
      const current = await read('AWSCURRENT');
      // A retried step: the pending set is already stored.
      if (parseKeySet(await readPendingValue())) return { step };
      const { set, changes } = rotateKeySet(current, clock.nowMs(), (await newSigningKey()) as StoredKey);
      await client.send(
        new PutSecretValueCommand({
          SecretId: secretId,
          ClientRequestToken: token,
          SecretString: JSON.stringify(set),
          VersionStages: ['AWSPENDING'],
        }),
      );
      logger.info('signing keys: pending set stored', { changes });
      return { step, changes };
    }
    case 'setSecret':
      // Nothing outside the secret holds the keys.
      return { step };
    case 'testSecret': {
      const current = await read('AWSCURRENT');
      const pending = parseKeySet(await readPendingValue());
      if (!pending) {
        // No key set pending: createSecret has not run, so this is Secrets Manager's check of the schedule
        // (RotateImmediatelyOnUpdate: false), on a pending version that may be empty, a copy of AWSCURRENT (on a
        // first deploy CloudFormation's random string) or anything else (issue 35 item 3, issue 46.19). Test what a
        // rotation would store now; finishSecret refuses to make anything but a checked key set current.
        const { set } = rotateKeySet(current, clock.nowMs(), (await newSigningKey()) as StoredKey);
        await checked(current, set);
        logger.info('signing keys: rotation configuration tested on what a rotation would store');
        return { step };
      }
      await checked(current, pending);
      return { step };
    }
    case 'finishSecret': {
      const pending = parseKeySet(await readPendingValue());
      if (!pending) throw new Error('the pending signing-key set is not a key set: AWSCURRENT stays as it is');
      await checked(await read('AWSCURRENT'), pending);
      const currentVersion = Object.entries(stages).find(([, names]) => names.includes('AWSCURRENT'))?.[0];
      await client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: secretId,
          VersionStage: 'AWSCURRENT',
          MoveToVersionId: token,
          ...(currentVersion ? { RemoveFromVersionId: currentVersion } : {}),
        }),
      );
      logger.info('signing keys: rotation finished', { version: token });
      return { step };
    }
    default:
      throw new Error(`unknown rotation step ${String(step)}`);
  }
};

/** The schedule names the secret by its full ARN, the function's variable by the ARN CloudFormation returned. */
function sameSecret(a: string, b: string): boolean {
  return a === b || a.startsWith(b) || b.startsWith(a);
}

/** `next` may replace `current`: rotationProblem finds nothing, and its signing key signs and verifies. */
async function checked(current: KeySet | undefined, next: KeySet): Promise<void> {
  const problem = rotationProblem(current, next, clock.nowMs());
  if (problem) throw new Error(problem);
  await signsAndVerifies(signingKeyOf(next)!);
}

/** The key signs, and its public half verifies what it signed. */
async function signsAndVerifies(key: StoredKey): Promise<void> {
  const { d: _private, ...publicPart } = key;
  const payload = new TextEncoder().encode('dispatch signing-key rotation test');
  const signed = await new CompactSign(payload)
    .setProtectedHeader({ alg: 'ES256', kid: key.kid })
    .sign(await importJWK(key, 'ES256'));
  await compactVerify(signed, await importJWK(publicPart, 'ES256'));
}
