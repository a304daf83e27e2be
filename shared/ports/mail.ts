/**
 * The mail port: invitations, password resets, security codes and welcomes go through one interface. The local
 * adapter keeps an outbox a developer can read (`GET /_local/outbox`); the cloud adapter sends through SES.
 */
import { clock } from '#shared/clock';

export type MailKind = 'invitation' | 'password_reset' | 'security_code' | 'welcome';

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

export const localOutbox: MailPort & { read(to?: string): OutboxMessage[] } = {
  async send(mail) {
    outbox.push({ ...mail, sent_at: clock.nowIso() });
    if (outbox.length > 10_000) outbox.shift();
  },
  read(to) {
    const wanted = to?.toLowerCase();
    return outbox.filter((m) => wanted === undefined || m.to.toLowerCase() === wanted).reverse();
  },
};

let port: MailPort = localOutbox;

export const mail = (): MailPort => port;

export function useMailPort(adapter: MailPort): void {
  port = adapter;
}
