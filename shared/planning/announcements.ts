/**
 * The one publisher of planning's moves (issue 56): a decision (shared/planning/pair-moves.ts, dispatch.ts's and
 * execution.ts's moves) names what its move announces as data, in the order it is told, and `publish` tells it:
 * frames on WebSocket channels (`planning.<id>`, a driver's `user.<id>`, which also push), partners' webhooks, the
 * wave worker's mark (a close that may leave a runsheet without an open offer), and the closes a win causes (its
 * rivals', the driver's other offers at capacity: moves of their own, done by the caller's `closes`). Offers told in
 * bulk (the planning job's run, a wave: shared/planning/offer-announcements.ts) are deliveries, each one subscriber
 * Query of its channel however many events it carries, and drivers' pushes, in the push port's bulk calls.
 *
 * Every announcement is keyed by the event it tells, so telling it again (a retried request) sends the same frame id
 * and `webhook-id`. A failure is the request's: the move is recorded, and its retry tells the rest.
 */
import { mapLimited } from '#shared/concurrency';
import type { EventData, EventName } from '#shared/notifications/events';
import { type BulkPush, sendPushMessages } from '#shared/notifications/push-keys';
import { publishEvent, publishEvents } from '#shared/notifications/realtime';
import type { PairRecord } from '#shared/planning/pair-records';
import { checkWaveSoon } from '#shared/planning/wave-plans';
import { publishPartnerEvent } from '#shared/webhooks/deliveries';
import type { PartnerEventType } from '#shared/webhooks/events';

export type Announcement =
  /** A frame on a WebSocket channel (its push, for a driver's channel, is the channel's). */
  | { to: 'channel'; channel: string; name: EventName; event: { key: string; data: unknown } }
  /** A webhook to each of the organisation's partners whose scopes see it. */
  | { to: 'partners'; orgId: string; type: PartnerEventType; data: unknown; key: string }
  /** The runsheet is due for the wave worker now (`extraWave`: one wave past `max_waves`, after a give-back). */
  | { to: 'waves'; planId: string; orgId: string; runsheetId: string; extraWave: boolean }
  /** The closes a win causes: the runsheet's other open offers, or the driver's when it filled their last place. */
  | { to: 'closes'; of: 'rivals' | 'capacity'; winner: PairRecord }
  /**
   * Frames in bulk: each delivery one subscriber Query of its channel, its events in order; `inFlight` deliveries at
   * once (the order between channels is no one's).
   */
  | { to: 'deliveries'; name: EventName; deliveries: Delivery[]; inFlight: number }
  /** Pushes to users of `application`'s devices, PUSHES_PER_CALL a bulk call. */
  | { to: 'push'; application: string; messages: BulkPush['push_messages'] };

/** One channel's events, told with one read of its subscribers. */
export interface Delivery {
  channel: string;
  events: { key: string; data: unknown }[];
}

/** The push port's bulk call takes at most this many messages. */
export const PUSHES_PER_CALL = 500;

/** A frame, its data checked against the event's declaration. */
export const frame = <N extends EventName>(
  channel: string,
  name: N,
  event: { key: string; data: EventData<N> },
): Announcement => ({ to: 'channel', channel, name, event });

/** Deliveries of one declared event, their data checked against its declaration; none when there is nothing to tell. */
export const bulkFrames = <N extends EventName>(
  name: N,
  each: { channel: string; events: { key: string; data: EventData<N> }[] }[],
  inFlight: number,
): Announcement[] => {
  const told = each.filter((delivery) => delivery.events.length > 0);
  return told.length > 0 ? [{ to: 'deliveries', name, deliveries: told, inFlight }] : [];
};

export const toPartners = (orgId: string, type: PartnerEventType, data: unknown, key: string): Announcement => ({
  to: 'partners',
  orgId,
  type,
  data,
  key,
});

/** The closes of a win, done by the move's own shell (they are moves: shared/planning/broadcasts.ts). */
export type Closes = (of: 'rivals' | 'capacity', winner: PairRecord) => Promise<void>;

/** Tells each announcement in order (one at a time: the order is the contract's, e.g. a win before its closes). */
export async function publish(announcements: readonly Announcement[], closes?: Closes): Promise<void> {
  for (const a of announcements) {
    if (a.to === 'channel') await publishEvent(a.channel, a.name, a.event as { key: string; data: never });
    else if (a.to === 'partners') await publishPartnerEvent(a.orgId, a.type, a.data, a.key);
    else if (a.to === 'waves') await checkWaveSoon(a.planId, a.orgId, a.runsheetId, a.extraWave);
    else if (a.to === 'deliveries')
      await mapLimited(a.deliveries, a.inFlight, (d) => publishEvents(d.channel, a.name, d.events as never));
    else if (a.to === 'push') {
      for (let i = 0; i < a.messages.length; i += PUSHES_PER_CALL)
        await sendPushMessages({
          application_key: a.application,
          push_messages: a.messages.slice(i, i + PUSHES_PER_CALL),
        });
    } else if (closes) await closes(a.of, a.winner);
    else throw new Error(`announced ${a.of} closes with no one to do them`);
  }
}
