/**
 * The mail port in use: the port (mail.ts) knows nothing of its adapters, this picks one: the local outbox in local
 * mode, SES (ses-mail.ts) from `MAIL_FROM` in the cloud.
 */
import { localOutbox, type MailPort } from '#shared/ports/mail';
import { sesMail } from '#shared/ports/ses-mail';

let port: MailPort | undefined;

/**
 * The mail port in use: the local outbox in local mode, SES from `MAIL_FROM` in the cloud. A cloud function without
 * `MAIL_FROM` fails loudly rather than dropping mail.
 */
export function mail(): MailPort {
  if (!port) {
    const from = process.env['MAIL_FROM'];
    if (process.env['DISPATCH_LOCAL'] === '1' || !from) {
      if (process.env['DISPATCH_LOCAL'] !== '1') throw new Error('missing required environment variable MAIL_FROM');
      port = localOutbox;
    } else {
      port = sesMail(from);
    }
  }
  return port;
}

export function useMailPort(adapter: MailPort): void {
  port = adapter;
}
