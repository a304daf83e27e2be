import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { sesMail } from '../../shared/ports/ses-mail.ts';

describe('the SES mail adapter', () => {
  it('sends one plain-text mail from the configured sender, tagged with its kind', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({ MessageId: 'm-1' });
    await sesMail('no-reply@dispatch.example', new SESv2Client({ region: 'eu-west-1' })).send({
      to: 'ada@example.com',
      subject: 'Reset your Dispatch password',
      text: 'Choose a new password within one hour: …',
      kind: 'password_reset',
      data: { reset_password_token: 'secret-token' },
    });
    const calls = ses.commandCalls(SendEmailCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]!.args[0].input;
    expect(input).toMatchObject({
      FromEmailAddress: 'no-reply@dispatch.example',
      Destination: { ToAddresses: ['ada@example.com'] },
      Content: {
        Simple: {
          Subject: { Data: 'Reset your Dispatch password' },
          Body: { Text: { Data: expect.stringContaining('one hour') } },
        },
      },
      EmailTags: [{ Name: 'kind', Value: 'password_reset' }],
    });
    // The outbox-only data never travels outside the body.
    expect(JSON.stringify(input)).not.toContain('secret-token');
  });

  it('lets a send failure surface to the caller', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).rejects(new Error('MessageRejected'));
    const adapter = sesMail('no-reply@dispatch.example', new SESv2Client({ region: 'eu-west-1' }));
    await expect(adapter.send({ to: 'a@b.co', subject: 's', text: 't', kind: 'welcome', data: {} })).rejects.toThrow(
      'MessageRejected',
    );
  });
});
