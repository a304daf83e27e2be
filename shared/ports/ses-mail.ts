/** The cloud adapter of the mail port: Amazon SES (v2 API), plain-text mails from the configured sender. */
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import type { Mail, MailPort } from '#shared/ports/mail';

export function sesMail(from: string, client: SESv2Client = new SESv2Client({})): MailPort {
  return {
    async send(mail: Mail) {
      await client.send(
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
