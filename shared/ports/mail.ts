/**
 * The mail port: invitations, password resets, security codes and welcomes go through one interface. The local
 * adapter (here) keeps an outbox a developer can read (`GET /_local/outbox`); the cloud adapter sends through SES
 * (ses-mail.ts); shared/ports/mailer.ts picks the one in use.
 */
import { clock } from '#shared/clock';
import { standsFor } from '#shared/local-invocation';
import { localOutboxStore } from '#shared/ports/local-outbox';

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

const outbox = localOutboxStore<OutboxMessage>('mail');

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
  },
  read(to) {
    const wanted = to?.toLowerCase();
    return outbox
      .all()
      .filter((m) => wanted === undefined || m.to.toLowerCase() === wanted)
      .reverse();
  },
};
