/**
 * The one publisher of planning's moves (issue 56): a decision (shared/planning/pair-moves.ts, dispatch.ts's and
 * execution.ts's moves) names what its move announces as data, in the order it is told, and `publish` tells it:
 * frames on WebSocket channels (`planning.<id>`, a driver's `user.<id>`, which also push), partners' webhooks, the
 * wave worker's mark (a close that may leave a runsheet without an open offer), and the closes a win causes (its
 * rivals', the driver's other offers at capacity: moves of their own, done by the caller's `closes`).
 *
 * Every announcement is keyed by the event it tells, so telling it again (a retried request) sends the same frame id
 * and `webhook-id`. A failure is the request's: the move is recorded, and its retry tells the rest.
 */
import type { EventData, EventName } from '#shared/notifications/events';
import { publishEvent } from '#shared/notifications/realtime';
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
  | { to: 'closes'; of: 'rivals' | 'capacity'; winner: PairRecord };

/** A frame, its data checked against the event's declaration. */
export const frame = <N extends EventName>(
  channel: string,
  name: N,
  event: { key: string; data: EventData<N> },
): Announcement => ({ to: 'channel', channel, name, event });

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
    else if (closes) await closes(a.of, a.winner);
    else throw new Error(`announced ${a.of} closes with no one to do them`);
  }
}
