/**
 * What offers sent in bulk tell, decided as data (shared/planning/offer-announcements.ts, issue 56): a planning job
 * run's chunks and its end, and a wave's (X17's too); and how a system close's failure ends (pair-moves.ts
 * `closeFailure`, behind broadcasts.ts `closeOffer`). The bulk is the point: one delivery (one subscriber Query) a
 * chunk or wave on the planning's channel, one a driver on `user.<id>`, one push a driver (a run's) or an offer (a
 * wave's), which test/e2e/capacity.test.ts pins in units; here each decision is read as data.
 */
import { describe, expect, it } from 'vitest';
import { conflict, invalidAt } from '../../shared/errors.ts';
import type { Announcement } from '../../shared/planning/announcements.ts';
import {
  broadcastAnnouncements,
  driverOffer,
  type Offered,
  RUN_DRIVERS_IN_FLIGHT,
  runOfferAnnouncements,
  WAVE_DRIVERS_IN_FLIGHT,
  waveOfferAnnouncements,
} from '../../shared/planning/offer-announcements.ts';
import { CONTENDED, type ContendedClose, closeFailure } from '../../shared/planning/pair-moves.ts';
import type { PairRecord } from '../../shared/planning/pair-records.ts';

const PLANNING = { id: 'plan-1', name: 'Monday' };
const EXPIRES = '2026-11-27T08:15:00.000Z';

/** An open offer of `runsheet` to `driver`, as the job or a wave writes it. */
const offer = (runsheet: string, driver: string, expiredTime = EXPIRES): Offered => {
  const id = `${runsheet}:${driver}`;
  const record: PairRecord = {
    id,
    pair: { id, runsheet: { id: runsheet, tasks: [] }, driver: { id: driver, name: driver.toUpperCase() } },
    plan: PLANNING,
    statuses: [],
    current_state: 'broadcasted',
    org_id: 'org-1',
    rev: 2,
    offer_ttl_s: 900,
  };
  return { record, expiredTime };
};

/** Each announcement in one line: what is told, where, how many. */
const outline = (told: Announcement[]) =>
  told.map((a) => {
    if (a.to === 'deliveries')
      return `${a.name} ×${a.inFlight}: ${a.deliveries.map((d) => `${d.channel}[${d.events.map((e) => e.key).join(' ')}]`).join(', ')}`;
    if (a.to === 'push')
      return `push ${a.application}: ${a.messages.map((m) => `${m.user_id} "${m.body}"`).join(', ')}`;
    return a.to;
  });

describe("a run's and a wave's offers told in bulk", () => {
  it("tells a chunk's pair.broadcast in one delivery on the planning's channel, in the offers' order", () => {
    const chunk = [offer('rs-1', 'd1'), offer('rs-1', 'd2'), offer('rs-2', 'd1', '2026-11-27T08:16:00.000Z')];
    const told = broadcastAnnouncements('plan-1', chunk, 1);
    expect(outline(told)).toEqual([
      'pair.broadcast ×1: planning.plan-1[rs-1:d1:broadcast rs-1:d2:broadcast rs-2:d1:broadcast]',
    ]);
    const [only] = told;
    expect(only?.to === 'deliveries' && only.deliveries[0]?.events[2]?.data).toEqual({
      pair_id: 'rs-2:d1',
      runsheet_id: 'rs-2',
      driver_id: 'd1',
      expired_time: '2026-11-27T08:16:00.000Z',
      wave: 1,
    });
  });

  it('tells nothing for a chunk, a run or a wave that offered nobody (no delivery, no push)', () => {
    expect(broadcastAnnouncements('plan-1', [], 1)).toEqual([]);
    expect(runOfferAnnouncements(PLANNING, [], 'driver-app')).toEqual([]);
    expect(waveOfferAnnouncements(PLANNING, { id: 'rs-1', name: 'North' }, 2, [], 'driver-app')).toEqual([]);
  });

  it('ends a run with one offer.new delivery a driver (all their offers, in order), then one push a driver', () => {
    // Two chunks: d1 is offered in both, d2 in the first, d3 in the second.
    const offers = [
      offer('rs-1', 'd1'),
      offer('rs-1', 'd2'),
      offer('rs-51', 'd3'),
      offer('rs-51', 'd1', '2026-11-27T08:16:00.000Z'),
    ].map(driverOffer);
    const told = runOfferAnnouncements(PLANNING, offers, 'driver-app');
    expect(outline(told)).toEqual([
      `offer.new ×${RUN_DRIVERS_IN_FLIGHT}: user.d1[rs-1:d1:broadcast rs-51:d1:broadcast], user.d2[rs-1:d2:broadcast], user.d3[rs-51:d3:broadcast]`,
      'push driver-app: d1 "2 runsheets of Monday await your answer", d2 "1 runsheet of Monday await your answer", d3 "1 runsheet of Monday await your answer"',
    ]);
    const push = told[1];
    expect(push?.to === 'push' && push.messages[0]).toEqual({
      user_id: 'd1',
      title: 'New runsheets offered',
      body: '2 runsheets of Monday await your answer',
      data: { planning_id: 'plan-1', pair_ids: ['rs-1:d1', 'rs-51:d1'] },
    });
    const deliveries = told[0];
    expect(deliveries?.to === 'deliveries' && deliveries.deliveries[0]?.events[1]).toEqual({
      key: 'rs-51:d1:broadcast',
      data: {
        pair_id: 'rs-51:d1',
        planning_id: 'plan-1',
        runsheet_id: 'rs-51',
        expired_time: '2026-11-27T08:16:00.000Z',
      },
    });
  });

  it("tells a wave's pair.broadcast, then each driver's offer.new, then a push an offer naming the runsheet", () => {
    const wave = [offer('rs-1', 'd4'), offer('rs-1', 'd5')];
    const told = waveOfferAnnouncements(PLANNING, { id: 'rs-1', name: 'North' }, 3, wave, 'driver-app');
    expect(outline(told)).toEqual([
      'pair.broadcast ×1: planning.plan-1[rs-1:d4:broadcast rs-1:d5:broadcast]',
      `offer.new ×${WAVE_DRIVERS_IN_FLIGHT}: user.d4[rs-1:d4:broadcast], user.d5[rs-1:d5:broadcast]`,
      'push driver-app: d4 "North of Monday awaits your answer", d5 "North of Monday awaits your answer"',
    ]);
    const broadcast = told[0];
    expect(broadcast?.to === 'deliveries' && broadcast.deliveries[0]?.events.map((e) => e.data)).toEqual([
      { pair_id: 'rs-1:d4', runsheet_id: 'rs-1', driver_id: 'd4', expired_time: EXPIRES, wave: 3 },
      { pair_id: 'rs-1:d5', runsheet_id: 'rs-1', driver_id: 'd5', expired_time: EXPIRES, wave: 3 },
    ]);
    const push = told[2];
    expect(push?.to === 'push' && push.messages[1]).toEqual({
      user_id: 'd5',
      title: 'New runsheet offered',
      body: 'North of Monday awaits your answer',
      data: { planning_id: 'plan-1', pair_ids: ['rs-1:d5'] },
    });
    // A runsheet without a name is named by its id.
    const unnamed = waveOfferAnnouncements(PLANNING, { id: 'rs-9', name: undefined }, 2, [offer('rs-9', 'd4')], 'a');
    expect(outline(unnamed).at(-1)).toBe('push a: d4 "rs-9 of Monday awaits your answer"');
  });

  it("keys every frame by the pair's broadcast, so a rerun that tells an open offer again sends the same frame id", () => {
    const first = waveOfferAnnouncements(PLANNING, { id: 'rs-1', name: 'N' }, 2, [offer('rs-1', 'd1')], 'a');
    const again = waveOfferAnnouncements(PLANNING, { id: 'rs-1', name: 'N' }, 2, [offer('rs-1', 'd1')], 'a');
    expect(again).toEqual(first);
  });
});

describe("a system close's failure (closeFailure)", () => {
  const CONTENDS: ContendedClose[] = ['skip', 'throw', 'unavailable'];

  it('takes a pair answered or closed already as nothing to close, whatever the caller asked', () => {
    const answered = conflict('pair is accepted; system_rejected is not allowed');
    for (const contended of CONTENDS) expect(closeFailure(answered, contended)).toBe('none');
  });

  it('ends a close that kept losing its write as its caller asked: skipped, thrown, or a 503', () => {
    const lost = conflict(CONTENDED);
    expect(CONTENDS.map((contended) => closeFailure(lost, contended))).toEqual(['none', 'throw', 'unavailable']);
  });

  it('throws any other failure (a dependency, a bad input) whatever the caller asked', () => {
    for (const error of [new Error('ProvisionedThroughputExceededException'), invalidAt('reason', 'bad')])
      for (const contended of CONTENDS) expect(closeFailure(error, contended)).toBe('throw');
  });
});
