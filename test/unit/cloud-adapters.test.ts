import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { sqsQueue } from '../../shared/ports/queue.ts';
import { kmsSecretBox, localSecretBox } from '../../shared/ports/secret-box.ts';
import { routeBuildMessage } from '../../shared/routing/builds.ts';
import { isPrivateAddress } from '../../shared/tokens/webhook-url.ts';
import { signWebhook } from '../../shared/webhooks/signing.ts';

process.env['AWS_REGION'] ??= 'eu-west-1';

describe('the SQS work queue adapter', () => {
  it('sends the message with SQS’s delay capped at 15 minutes and the due time in the body', async () => {
    const sqs = mockClient(SQSClient);
    sqs.on(SendMessageCommand).resolves({ MessageId: '1' });
    const queue = sqsQueue('https://sqs.eu-west-1.amazonaws.com/1/work');
    await queue.enqueue({ kind: 'webhook', event_id: 'msg_1' }, 2 * 3600 * 1000);
    await queue.enqueue({ kind: 'webhook', event_id: 'msg_2' }, 5_000);
    const [long, short] = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(long).toMatchObject({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/work', DelaySeconds: 900 });
    expect(JSON.parse(long!.MessageBody!).not_before).toBeGreaterThan(Date.now() + 3600 * 1000);
    expect(short).toMatchObject({ DelaySeconds: 5 });
    expect(long).not.toHaveProperty('MessageGroupId');
  });

  it('sends a route build with its organisation as the fair queue’s message group (issue 51 item 2)', async () => {
    const sqs = mockClient(SQSClient);
    sqs.on(SendMessageCommand).resolves({ MessageId: '1' });
    const queue = sqsQueue('https://sqs.eu-west-1.amazonaws.com/1/routes');
    await queue.enqueue(routeBuildMessage({ planning_id: 'plan_1', id: 'build_1', org_id: 'org_a' }), 0);
    const sent = sqs.commandCalls(SendMessageCommand)[0]!.args[0].input;
    expect(sent).toMatchObject({ MessageGroupId: 'org_a', DelaySeconds: 0 });
    expect(JSON.parse(sent.MessageBody!)).toMatchObject({ kind: 'route_build', build_id: 'build_1', group: 'org_a' });
  });

  it('counts the messages waiting (visible and delayed) from the queue’s approximate attributes', async () => {
    const sqs = mockClient(SQSClient);
    sqs.on(GetQueueAttributesCommand).resolves({
      Attributes: { ApproximateNumberOfMessages: '3', ApproximateNumberOfMessagesDelayed: '1' },
    });
    expect(await sqsQueue('https://sqs.eu-west-1.amazonaws.com/1/routes').waiting()).toBe(4);
  });
});

describe('secret boxes', () => {
  it('KMS: seals with Encrypt and opens with Decrypt on the configured key', async () => {
    const kms = mockClient(KMSClient);
    kms.on(EncryptCommand).resolves({ CiphertextBlob: Buffer.from('cipher') });
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from('whsec_abc') });
    const box = kmsSecretBox('arn:aws:kms:eu-west-1:1:key/k');
    const sealed = await box.seal('whsec_abc');
    expect(sealed).toBe(`kms:v1:${Buffer.from('cipher').toString('base64')}`);
    expect(await box.open(sealed)).toBe('whsec_abc');
    expect(kms.commandCalls(EncryptCommand)[0]!.args[0].input).toMatchObject({
      KeyId: 'arn:aws:kms:eu-west-1:1:key/k',
    });
    expect(Buffer.from(kms.commandCalls(DecryptCommand)[0]!.args[0].input.CiphertextBlob!).toString()).toBe('cipher');
  });

  it('local: AES-GCM round trip, and tampering is detected', async () => {
    const box = localSecretBox(`${process.env['TMPDIR'] ?? '/tmp'}/secret-box-${Date.now()}.key`);
    const sealed = await box.seal('whsec_local');
    expect(sealed).not.toContain('whsec_local');
    expect(await box.open(sealed)).toBe('whsec_local');
    const raw = Buffer.from(sealed.slice('local:v1:'.length), 'base64');
    raw[raw.length - 1]! ^= 1;
    await expect(box.open(`local:v1:${raw.toString('base64')}`)).rejects.toThrow();
  });
});

describe('webhook safety and signing', () => {
  it('knows private, loopback and link-local addresses', () => {
    for (const address of [
      '10.1.2.3',
      '127.0.0.1',
      '169.254.169.254',
      '172.20.0.1',
      '192.168.1.1',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:10.0.0.1',
      '100.64.0.1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111'])
      expect(isPrivateAddress(address), address).toBe(false);
  });

  it('signs as Standard Webhooks does (the specification’s own example)', () => {
    // From the Standard Webhooks specification's test vector.
    const signature = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});
