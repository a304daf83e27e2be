/**
 * What offers sent in bulk tell, decided as data (issue 56): the planning job's run (wave 1, chunk by chunk) and a
 * wave of the wave worker (X17's too). Each is told by shared/planning/announcements.ts `publish`, in bulk: one
 * `pair.broadcast` delivery on `planning.<id>` for a chunk's or a wave's offers (one subscriber Query however many), one
 * `offer.new` delivery on each driver's `user.<id>` with all their offers, and one push a driver (a run's: "New
 * runsheets offered", however many) or an offer (a wave's: one runsheet, one offer a driver). Every event is keyed by
 * the pair's broadcast (`pairEventKey`), so a rerun that offers an open pair again tells the same frame.
 */
import { type Announcement, bulkFrames } from '#shared/planning/announcements';
import { offerNew, type PairRecord, pairEventKey } from '#shared/planning/pair-records';

/** An offer told: its pair, and the expiry it was broadcast with (a rerun's open pair keeps its first one). */
export interface Offered {
  record: PairRecord;
  expiredTime: string;
}

/** A driver's offer as the run keeps it until its last chunk is written: only what `offer.new` and the push need. */
export interface DriverOffer {
  driverId: string;
  offer: ReturnType<typeof offerNew>;
}

/** `offer.new` deliveries in flight at once: a run's (one a driver, however many drivers), a wave's (at most 50). */
export const RUN_DRIVERS_IN_FLIGHT = 32;
export const WAVE_DRIVERS_IN_FLIGHT = 8;

/** The offers' `pair.broadcast` on the planning's channel, in the offers' order: one delivery (none for no offer). */
export const broadcastAnnouncements = (planId: string, offered: readonly Offered[], wave: number): Announcement[] =>
  bulkFrames(
    'pair.broadcast',
    [
      {
        channel: `planning.${planId}`,
        events: offered.map(({ record, expiredTime }) => ({
          key: pairEventKey(record.id, 'broadcast'),
          data: {
            pair_id: record.id,
            runsheet_id: record.pair.runsheet.id,
            driver_id: record.pair.driver.id,
            expired_time: expiredTime,
            wave,
          },
        })),
      },
    ],
    1,
  );

/** What the run keeps of an offer for the drivers' telling at its end. */
export const driverOffer = ({ record, expiredTime }: Offered): DriverOffer => ({
  driverId: record.pair.driver.id,
  offer: offerNew(record, expiredTime),
});

/** Each driver's offers, in the order they were first offered one, each driver's in the order offered. */
function byDriver(offers: readonly DriverOffer[]): Map<string, DriverOffer['offer'][]> {
  const mine = new Map<string, DriverOffer['offer'][]>();
  for (const { driverId, offer } of offers) {
    const theirs = mine.get(driverId);
    if (theirs) theirs.push(offer);
    else mine.set(driverId, [offer]);
  }
  return mine;
}

/**
 * The end of a planning job's run: each driver hears of their own offers on `user.<id>` (contract 4.3), in one
 * delivery however many they are, then one push a driver.
 */
export function runOfferAnnouncements(
  planning: { id: string; name: string },
  offers: readonly DriverOffer[],
  application: string,
): Announcement[] {
  const mine = [...byDriver(offers)];
  return [
    ...bulkFrames(
      'offer.new',
      mine.map(([driverId, events]) => ({ channel: `user.${driverId}`, events })),
      RUN_DRIVERS_IN_FLIGHT,
    ),
    ...(mine.length > 0
      ? [
          {
            to: 'push' as const,
            application,
            messages: mine.map(([driverId, events]) => ({
              user_id: driverId,
              title: 'New runsheets offered',
              body: `${events.length} runsheet${events.length === 1 ? '' : 's'} of ${planning.name} await your answer`,
              data: { planning_id: planning.id, pair_ids: events.map((event) => event.data.pair_id) },
            })),
          },
        ]
      : []),
  ];
}

/**
 * A wave's offers (one runsheet, a driver each): their `pair.broadcast` on the planning's channel, each driver's
 * `offer.new`, then one push an offer naming the runsheet. Nothing when the wave offered nobody.
 */
export function waveOfferAnnouncements(
  planning: { id: string; name: string },
  runsheet: { id: string; name: string | undefined },
  wave: number,
  offered: readonly Offered[],
  application: string,
): Announcement[] {
  if (offered.length === 0) return [];
  return [
    ...broadcastAnnouncements(planning.id, offered, wave),
    ...bulkFrames(
      'offer.new',
      offered.map(({ record, expiredTime }) => ({
        channel: `user.${record.pair.driver.id}`,
        events: [offerNew(record, expiredTime)],
      })),
      WAVE_DRIVERS_IN_FLIGHT,
    ),
    {
      to: 'push',
      application,
      messages: offered.map(({ record }) => ({
        user_id: record.pair.driver.id,
        title: 'New runsheet offered',
        body: `${runsheet.name ?? runsheet.id} of ${planning.name} awaits your answer`,
        data: { planning_id: planning.id, pair_ids: [record.id] },
      })),
    },
  ];
}
