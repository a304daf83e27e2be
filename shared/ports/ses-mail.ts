/** The cloud adapter of the mail port: Amazon SES (v2 API), plain-text mails from the configured sender. */
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import { wire } from '#shared/aws/wire';
import type { Mail, MailPort } from '#shared/ports/mail';

/**
 * `client` is for tests; by default the SES client is loaded on the first mail, so that functions which never send
 * one do not load it at cold start (the Lambda runtime ships it; it is not bundled).
 */
export function sesMail(from: string, client?: SESv2Client): MailPort {
  let ses: Promise<{ client: SESv2Client; SendEmailCommand: typeof import('@aws-sdk/client-sesv2').SendEmailCommand }>;
  const load = () =>
    (ses ??= import('@aws-sdk/client-sesv2').then((sdk) => ({
      client: client ?? new sdk.SESv2Client(wire()),
      SendEmailCommand: sdk.SendEmailCommand,
    })));
  return {
    async send(mail: Mail) {
      const { client: sesClient, SendEmailCommand } = await load();
      await sesClient.send(
        new SendEmailCommand({
          FromEmailAddress: from,
          Destination: { ToAddresses: [mail.to] },
          Content: {
            Simple: {
              Subject: { Data: mail.subject, Charset: 'UTF-8' },
              Body: { Text: { Data: mail.text, Charset: 'UTF-8' } },
            },
          },
          // The kind lets SES event destinations tell invitations from resets; the token never leaves the body.
          EmailTags: [{ Name: 'kind', Value: mail.kind }],
        }),
      );
    },
  };
}
