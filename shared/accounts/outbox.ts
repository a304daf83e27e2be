/**
 * The mail outbox, for mail that follows a change the client cannot simply repeat (a welcome after a registration:
 * the registration's retry would meet its own account and answer 409). The mail is written in the same transaction
 * as the change (`MAILOUT#<id>`, listed in the sparse GSI3 partitions `OUTBOX#<n>`), sent right after the commit, and
 * deleted once sent. If it cannot be sent, it stays, the request still answers what was done, and the sweep
 * (functions/workers/expire-offers.ts, every minute; locally every two seconds) sends it later. Delivery is at
 * least once: a mail whose send succeeded but whose delete failed is sent again.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { db, mainTableName, type TransactItem } from '#shared/db/client';
import { dueEntries, sweepPartition } from '#shared/db/shards';
import { recordObjectId } from '#shared/ids';
import { logger } from '#shared/log';
import { type Mail, mail } from '#shared/ports/mail';

/** The sweep index's work list of mail held (`OUTBOX#<n>`). */
const OUTBOX = 'OUTBOX';
const outboxKey = (id: string) => ({ PK: `MAILOUT#${id}`, SK: 'MAIL' });

/** The sweep leaves alone mail younger than this (its own request is still sending it). */
const settleMs = () => Number(process.env['MAIL_OUTBOX_SETTLE_MS'] ?? 30_000);

export interface OutboxMail {
  id: string;
  mail: Mail;
  /** Ride this along in the change's transaction. */
  put: TransactItem;
}

export function outboxMail(message: Mail): OutboxMail {
  // Derived from the request's Idempotency-Key: a registration retried after its answer was lost sends (and then
  // removes) the entry its first attempt wrote, not a second one.
  const id = recordObjectId();
  const created = clock.nowIso();
  return {
    id,
    mail: message,
    put: {
      Put: {
        TableName: mainTableName(),
        Item: {
          ...outboxKey(id),
          GSI3PK: sweepPartition(OUTBOX, id),
          GSI3SK: `${created}#${id}`,
          entity: 'mail_outbox',
          mail: message,
        },
      },
    },
  };
}

/** After the commit: send and forget the outbox entry; a failure leaves it for the sweep. Never throws. */
export async function deliverOutboxMail(entry: { id: string; mail: Mail }): Promise<boolean> {
  try {
    await mail().send(entry.mail);
  } catch (error) {
    logger.warn('mail not sent; it stays in the outbox and the sweep sends it later', {
      outbox_id: entry.id,
      kind: entry.mail.kind,
      error: error as Error,
    });
    return false;
  }
  await db()
    .send(new DeleteCommand({ TableName: mainTableName(), Key: outboxKey(entry.id) }))
    .catch((error: unknown) =>
      logger.warn('sent mail not removed from the outbox; it may be sent again', {
        outbox_id: entry.id,
        error: error as Error,
      }),
    );
  return true;
}

/** The sweep's part: every outbox mail older than the settle time, oldest first, 100 a run. */
export async function deliverOutbox(): Promise<number> {
  const before = new Date(clock.nowMs() - settleMs()).toISOString();
  const out = await dueEntries(OUTBOX, `${before}~`, 100);
  let sent = 0;
  for (const item of out.items) {
    const id = String(item['PK']).slice('MAILOUT#'.length);
    if (await deliverOutboxMail({ id, mail: item['mail'] as Mail })) sent++;
  }
  return sent;
}
