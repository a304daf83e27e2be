/**
 * Issue 35 item 3: the signing-key rotation on a first deploy. DispatchWorkers creates the rotation schedule with
 * `RotateImmediatelyOnUpdate: false`, so Secrets Manager checks it by running testSecret alone on a pending copy of
 * AWSCURRENT, which on a first deploy is still the random string CloudFormation generated (no cold start has filled
 * the secret). That check failed the deploy ("the pending signing-key set is not a key set"). Then the whole
 * rotation (createSecret, setSecret, testSecret, finishSecret) on the same never-filled secret, and the next one.
 * The rotation function runs in this process against the Secrets Manager stand-in (versions and staging labels as
 * the service keeps them: test/bundles/stand-ins.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RotationEvent } from '../../functions/auth/rotate-signing-keys.ts';
import { LOCAL_CREDENTIALS } from '../../lib/local/emulators.ts';
import { parseKeySet } from '../../shared/auth/key-rotation.ts';
import { type StandIns, startStandIns } from '../bundles/stand-ins.ts';

const SIGNING = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:SigningKeys-AbCdEf';
/** What CloudFormation leaves in a new secret with GenerateSecretString. */
const GENERATED = randomBytes(16).toString('hex');

let standIns: StandIns;
let rotate: (event: RotationEvent) => Promise<unknown>;
const saved = { ...process.env };

beforeAll(async () => {
  standIns = await startStandIns({ [SIGNING]: GENERATED });
  Object.assign(process.env, {
    SIGNING_KEY_SECRET_ARN: SIGNING,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: standIns.url,
  });
  ({ handler: rotate } = await import('../../functions/auth/rotate-signing-keys.ts'));
});

afterAll(async () => {
  process.env = saved;
  await standIns?.stop();
});

const step = (Step: RotationEvent['Step'], token: string) =>
  rotate({ SecretId: SIGNING, ClientRequestToken: token, Step });

/** Secrets Manager's rotation: a pending version, then the four steps in order. */
async function fullRotation(token: string) {
  standIns.secrets.startRotation(SIGNING, token);
  for (const name of ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const) await step(name, token);
}

describe('the signing-key rotation on a first deploy (issue 35 item 3)', () => {
  it('passes the schedule’s configuration test on the secret CloudFormation generated, and leaves it as it was', async () => {
    const token = randomUUID();
    standIns.secrets.startConfigurationTest(SIGNING, token);
    await expect(step('testSecret', token)).resolves.toEqual({ step: 'testSecret' });
    standIns.secrets.endConfigurationTest(SIGNING, token);
    // The same with an empty pending version (issue 46.19: AWS documents no copy).
    const empty = randomUUID();
    standIns.secrets.startRotation(SIGNING, empty);
    await expect(step('testSecret', empty)).resolves.toEqual({ step: 'testSecret' });
    standIns.secrets.endConfigurationTest(SIGNING, empty);
    expect(standIns.secrets.current(SIGNING)).toBe(GENERATED);
  });

  it('rotates the never-filled secret into a key set with one signing key', async () => {
    const token = randomUUID();
    await fullRotation(token);
    expect(standIns.secrets.stagesOf(SIGNING)[token]).toEqual(['AWSCURRENT']);
    const set = parseKeySet(standIns.secrets.current(SIGNING));
    expect(set?.keys.map((key) => key.state)).toEqual(['current']);
    expect(set?.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256' });
  });

  it('passes a later configuration test on the filled set, and the next rotation lists a next key', async () => {
    const check = randomUUID();
    standIns.secrets.startConfigurationTest(SIGNING, check);
    await expect(step('testSecret', check)).resolves.toEqual({ step: 'testSecret' });
    standIns.secrets.endConfigurationTest(SIGNING, check);
    const before = parseKeySet(standIns.secrets.current(SIGNING))!;
    await fullRotation(randomUUID());
    const after = parseKeySet(standIns.secrets.current(SIGNING))!;
    expect(after.keys.map((key) => key.state)).toEqual(['current', 'next']);
    expect(after.keys[0]!.kid).toBe(before.keys[0]!.kid);
  });

  it('tests the schedule whatever the pending version holds: empty, or a value that differs (issue 46.19)', async () => {
    const filled = standIns.secrets.current(SIGNING);
    // Empty: a version staged AWSPENDING with no value yet.
    const empty = randomUUID();
    standIns.secrets.startRotation(SIGNING, empty);
    await expect(step('testSecret', empty)).resolves.toEqual({ step: 'testSecret' });
    standIns.secrets.endConfigurationTest(SIGNING, empty);
    // Differs: a value that is neither a key set nor a copy of AWSCURRENT.
    const other = randomUUID();
    await pending(other, 'not a key set');
    await expect(step('testSecret', other)).resolves.toEqual({ step: 'testSecret' });
    standIns.secrets.endConfigurationTest(SIGNING, other);
    expect(standIns.secrets.current(SIGNING)).toBe(filled);
  });

  it('never makes current a pending version that is not a checked key set', async () => {
    const before = standIns.secrets.current(SIGNING);
    const token = randomUUID();
    await pending(token, 'not a key set');
    await expect(step('finishSecret', token)).rejects.toThrow(/not a key set/);
    const dropsCurrent = randomUUID();
    await pending(dropsCurrent, JSON.stringify({ keys: [] }));
    await expect(step('finishSecret', dropsCurrent)).rejects.toThrow(/not a key set/);
    expect(standIns.secrets.current(SIGNING)).toBe(before);
  });
});

/** A rotation whose pending version someone else wrote: not what createSecret stores. */
async function pending(token: string, value: string) {
  standIns.secrets.startRotation(SIGNING, token);
  const { PutSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  await new SecretsManagerClient({
    endpoint: standIns.url,
    region: 'eu-west-1',
    credentials: LOCAL_CREDENTIALS,
  }).send(
    new PutSecretValueCommand({
      SecretId: SIGNING,
      ClientRequestToken: token,
      SecretString: value,
      VersionStages: ['AWSPENDING'],
    }),
  );
}
