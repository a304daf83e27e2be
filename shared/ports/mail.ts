/**
 * The mail port: invitations, password resets, security codes and welcomes go through one interface. The local
 * adapter keeps an outbox a developer can read (`GET /_local/outbox`); the cloud adapter sends through SES.
 */
import { clock } from '#shared/clock';
import { standsFor } from '#shared/local-invocation';
import { sesMail } from '#shared/ports/ses-mail';

export type MailKind = 'invitation' | 'password_reset' | 'security_code' | 'welcome' | 'email_changed';

export interface Mail {
  to: string;
  subject: string;
  /** Plain text a person can act on. */
  text: string;
  kind: MailKind;
  /** The token or code the mail carries, for the local outbox only. */
  data: Record<string, string>;
}

export interface OutboxMessage extends Mail {
  sent_at: string;
}

export interface MailPort {
  send(mail: Mail): Promise<void>;
}

const outbox: OutboxMessage[] = [];

export const localOutbox: MailPort & { read(to?: string): OutboxMessage[]; failing: boolean } = {
  /** A fault switch for tests: while set, sending fails as SES does when it is down (HTTP 503, a server fault). */
  failing: false,
  async send(mail) {
    standsFor({ action: 'ses:SendEmail', resource: 'mailIdentity' });
    if (localOutbox.failing) {
      throw Object.assign(new Error('the local mail outbox is switched to fail'), {
        name: 'ServiceUnavailableException',
        $fault: 'server',
        $metadata: { httpStatusCode: 503 },
      });
    }
    outbox.push({ ...mail, sent_at: clock.nowIso() });
    if (outbox.length > 10_000) outbox.shift();
  },
  read(to) {
    const wanted = to?.toLowerCase();
    return outbox.filter((m) => wanted === undefined || m.to.toLowerCase() === wanted).reverse();
  },
};

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
