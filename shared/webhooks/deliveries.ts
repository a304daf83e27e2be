/**
 * Partner webhooks: `publishPartnerEvent` queues one message per partner of the organisation whose scopes read the
 * event (events.ts: withheld without its scope, positions left out without `locations:read`); `deliverWebhook` (the
 * worker) asks the same again of the partner as it is then (a scope taken away since is honoured), signs and POSTs it, records every attempt, and on a failure queues the next attempt with exponential
 * back-off until 24 hours have passed since the first. The attempts are listed per partner, newest first.
 */
import { createHash } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { db, mainTableName } from '#shared/db/client';
import { type PageRequest, queryPage } from '#shared/db/paging';
import { newObjectId } from '#shared/ids';
import { logger } from '#shared/log';
import { type QueuedMessage, queue, registerLocalWorker } from '#shared/ports/queue';
import { secretBox } from '#shared/ports/secret-box';
import { findClient, getClient, partnerScopesOf, partnersOf } from '#shared/tokens/clients';
import type { WebhookLookup } from '#shared/tokens/webhook-url';
import { eventForPartner, type PartnerEventType } from '#shared/webhooks/events';
import { signWebhook } from '#shared/webhooks/signing';
import { postWebhook } from '#shared/webhooks/transport';

export const RETRY_WINDOW_MS = 24 * 3600 * 1000;
/** Waits before the 2nd, 3rd, … attempt; the last one repeats until the 24-hour window closes. */
const DEFAULT_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000];
const ATTEMPT_TIMEOUT_MS = 10_000;

function retryDelays(): number[] {
  const configured = process.env['WEBHOOK_RETRY_DELAYS_MS'];
  const parsed = configured
    ?.split(',')
    .map(Number)
    .filter((n) => Number.isFinite(n) && n >= 0);
  return parsed && parsed.length > 0 ? parsed : DEFAULT_DELAYS_MS;
}

interface WebhookMessage extends QueuedMessage {
  kind: 'webhook';
  partner_id: string;
  event_id: string;
  type: string;
  /** Epoch seconds of the event: the signed `webhook-timestamp` of the first attempt and the payload's timestamp. */
  timestamp: string;
  data: unknown;
  attempt: number;
  first_attempt_at: number;
}

/**
 * Queues `type` with `data` for every partner acting for `orgId` whose current scopes read it (contract 4.2), as
 * that partner may receive it; answers how many it was queued for. The scopes come with the partners' records, read
 * once for the fan-out. `eventKey` names the event itself (a job's completion, a pair's answer): an event published
 * again after a fault (a retried request, a rerun worker) then carries the same `webhook-id`, by which Standard
 * Webhooks receivers drop duplicates.
 */
export async function publishPartnerEvent(
  orgId: string,
  type: PartnerEventType,
  data: unknown,
  eventKey?: string,
): Promise<number> {
  const partners = await partnersOf(orgId);
  const queued = partners.flatMap((partner) => {
    const visible = eventForPartner(type, data, partnerScopesOf(partner));
    return visible === undefined ? [] : [queueEvent(partner.id, type, visible, eventKey)];
  });
  await Promise.all(queued);
  return queued.length;
}

export async function queueEvent(
  partnerId: string,
  type: PartnerEventType,
  data: unknown,
  eventKey?: string,
): Promise<string> {
  const message: WebhookMessage = {
    kind: 'webhook',
    partner_id: partnerId,
    event_id: eventKey
      ? `msg_${createHash('sha256').update(`${partnerId}\u0000${type}\u0000${eventKey}`).digest('hex').slice(0, 24)}`
      : `msg_${newObjectId()}`,
    type,
    timestamp: clock.nowIso(),
    data,
    attempt: 1,
    first_attempt_at: clock.nowMs(),
  };
  await queue().enqueue(message, 0);
  return message.event_id;
}

/** T6 companion: a `webhook.test` event to one partner, so an integrator can check their endpoint. */
export async function sendTestEvent(partnerId: string) {
  const partner = await getClient(partnerId, 'partner');
  const eventId = await queueEvent(partner.id, 'webhook.test', { partner_authorization_id: partner.id });
  return { event_id: eventId, server_time: clock.nowIso() };
}

const deliveryKey = (partnerId: string, attemptedAt: string, eventId: string, attempt: number) => ({
  PK: `DELIVERY#${partnerId}`,
  SK: `${attemptedAt}#${eventId}#${String(attempt).padStart(3, '0')}`,
});

/**
 * How the worker reaches partners: the URL check's mode and name resolution (tests stand in for DNS and for the
 * cloud's checks in local mode).
 */
export const webhookNetwork: { local?: boolean; lookup?: WebhookLookup } = {};

/** The worker: one attempt of one message. */
export async function deliverWebhook(raw: QueuedMessage): Promise<void> {
  const message = raw as WebhookMessage;
  if (message.not_before && message.not_before > clock.nowMs()) {
    await queue().enqueue(message, message.not_before - clock.nowMs());
    return;
  }
  const partner = await findClient(message.partner_id);
  if (!partner || partner.revoked_at || !partner.webhook_url || !partner.webhook_secret_sealed) return;
  // The partner as it is now: a scope taken away (T5) after the fan-out withholds what is still queued or retried.
  const data = eventForPartner(message.type, message.data, partnerScopesOf(partner));
  if (data === undefined) {
    logger.info('webhook withheld: scope taken away', { partner_id: partner.id, event_id: message.event_id });
    return;
  }
  const body = JSON.stringify({ type: message.type, timestamp: message.timestamp, data });
  const sentAt = clock.nowEpochSeconds();
  const started = clock.nowMs();
  let status: number | null = null;
  let excerpt = '';
  try {
    const secret = await secretBox().open(partner.webhook_secret_sealed);
    // Checked again (the URL was checked when stored, but names move), and sent to the address that was checked.
    const answer = await postWebhook(
      partner.webhook_url,
      {
        'content-type': 'application/json',
        'user-agent': 'dispatch-webhooks/1',
        'webhook-id': message.event_id,
        'webhook-timestamp': String(sentAt),
        'webhook-signature': signWebhook(secret, message.event_id, sentAt, body),
      },
      body,
      { timeoutMs: ATTEMPT_TIMEOUT_MS, ...webhookNetwork },
    );
    status = answer.status;
    excerpt = answer.excerpt;
  } catch (error) {
    excerpt = `no response: ${(error as Error).message}`.slice(0, 500);
  }
  const latency = clock.nowMs() - started;
  const delivered = status !== null && status >= 200 && status < 300;
  const delays = retryDelays();
  const wait = delays[Math.min(message.attempt - 1, delays.length - 1)]!;
  const retry = !delivered && clock.nowMs() + wait - message.first_attempt_at <= RETRY_WINDOW_MS;
  const attemptedAt = new Date(started).toISOString();
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: {
        ...deliveryKey(partner.id, attemptedAt, message.event_id, message.attempt),
        entity: 'webhook_delivery',
        id: `${message.event_id}:${message.attempt}`,
        event_id: message.event_id,
        type: message.type,
        attempt: message.attempt,
        status,
        latency_ms: latency,
        response_excerpt: excerpt,
        attempted_at: attemptedAt,
        outcome: delivered ? 'delivered' : retry ? 'retrying' : 'failed',
        next_attempt_at: retry ? new Date(clock.nowMs() + wait).toISOString() : null,
        expires_at: clock.nowEpochSeconds() + 30 * 24 * 3600,
      },
    }),
  );
  if (delivered) return;
  if (retry) {
    await queue().enqueue({ ...message, attempt: message.attempt + 1, not_before: clock.nowMs() + wait }, wait);
  } else {
    logger.warn('webhook given up', { partner_id: partner.id, event_id: message.event_id, attempts: message.attempt });
  }
}

registerLocalWorker('webhook', deliverWebhook);

/** `GET /v1/admin/partner-authorizations/{id}/deliveries`. */
export async function listDeliveries(partnerId: string, page: PageRequest) {
  await getClient(partnerId, 'partner');
  const found = await queryPage(
    {
      TableName: mainTableName(),
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': `DELIVERY#${partnerId}` },
      ScanIndexForward: false,
    },
    page,
    (item) => {
      const { PK: _pk, SK: _sk, entity: _e, expires_at: _x, ...delivery } = item;
      return delivery;
    },
  );
  return { deliveries: found.items, meta: found.meta };
}
