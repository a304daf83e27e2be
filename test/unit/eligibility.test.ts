/** Who may be offered a runsheet (contract 4.7) and the reason a dispatcher reads when nobody took it. */
import { describe, expect, it } from 'vitest';
import { distanceM } from '#shared/locations/geo';
import {
  type DriverFacts,
  type EligibilityRunsheet,
  EXCLUSION_RULES,
  eligibleDrivers,
  exclusionOf,
  noExclusions,
  unassignedReason,
} from '#shared/planning/eligibility';
import { seededRandom } from '../support/random.ts';

const NOW = Date.parse('2026-11-25T09:00:00.000Z');
const PARAMETERS = { max_runsheets_per_driver: 1, max_location_age_s: 1800 };
const PICKUP = { latitude: 1.3, longitude: 103.8 };
const secondsAgo = (s: number) => new Date(NOW - s * 1000).toISOString();

/** A driver who may be offered anything: on duty, located near the pickup just now, no limits reached. */
const driver = (id: string, changes: Partial<DriverFacts> = {}): DriverFacts => ({
  id,
  on_duty: true,
  location: { latitude: 1.31, longitude: 103.81, server_time: secondsAgo(10) },
  service_types: [],
  runsheets_won: 0,
  offered: new Set(),
  ...changes,
});
const located: EligibilityRunsheet = { id: 'RS-1', pickup: PICKUP };
const ids = (drivers: readonly { driver: DriverFacts }[]) => drivers.map((d) => d.driver.id);

describe('exclusionOf: each rule alone', () => {
  const judged = (changes: Partial<DriverFacts>, runsheet: EligibilityRunsheet = located) =>
    exclusionOf(runsheet, driver('d', changes), PARAMETERS, NOW);

  it('admits a driver on duty, located recently, with room and never offered it', () => {
    expect(judged({})).toBeUndefined();
  });

  it('off_duty', () => expect(judged({ on_duty: false })).toBe('off_duty'));
  it('no_location', () => expect(judged({ location: undefined })).toBe('no_location'));
  it('already_offered', () => expect(judged({ offered: new Set(['RS-1']) })).toBe('already_offered'));
  it('at_capacity at max_runsheets_per_driver won, not below', () => {
    expect(judged({ runsheets_won: 1 })).toBe('at_capacity');
    expect(
      exclusionOf(located, driver('d', { runsheets_won: 1 }), { ...PARAMETERS, max_runsheets_per_driver: 2 }, NOW),
    ).toBeUndefined();
  });

  it('location_stale past max_location_age_s, fresh at it exactly and from a clock ahead of ours', () => {
    const at = (server_time: string) => judged({ location: { ...PICKUP, server_time } });
    expect(at(secondsAgo(1801))).toBe('location_stale');
    expect(at(secondsAgo(1800))).toBeUndefined();
    expect(at(secondsAgo(-30))).toBeUndefined();
    expect(at('not a time')).toBe('location_stale');
  });

  it('judges no location rule for a runsheet without coordinates', () => {
    const unlocated: EligibilityRunsheet = { id: 'RS-2' };
    expect(judged({ location: undefined }, unlocated)).toBeUndefined();
    expect(judged({ location: { ...PICKUP, server_time: secondsAgo(99_999) } }, unlocated)).toBeUndefined();
  });

  it('service_type only when both the runsheet and the driver name service types', () => {
    const van: EligibilityRunsheet = { ...located, service_type: 'van_1.7m' };
    expect(judged({ service_types: ['car'] }, van)).toBe('service_type');
    expect(judged({ service_types: ['car', 'van_1.7m'] }, van)).toBeUndefined();
    expect(judged({ service_types: [] }, van)).toBeUndefined();
    expect(judged({ service_types: ['car'] }, located)).toBeUndefined();
    expect(judged({ service_types: ['car'] }, { ...located, service_type: null })).toBeUndefined();
  });
});

describe('exclusionOf: one rule per driver, in the documented order', () => {
  const failsEverything = (): Partial<DriverFacts> => ({
    offered: new Set(['RS-1']),
    service_types: ['car'],
    runsheets_won: 5,
    on_duty: false,
    location: undefined,
  });
  it('names the first rule of already_offered, service_type, at_capacity, off_duty, no_location, location_stale', () => {
    const runsheet = { ...located, service_type: 'van_1.7m' };
    const facts = failsEverything();
    const seen: (string | undefined)[] = [];
    // Mend one failing fact at a time, in the documented order: the next rule takes over each time.
    const mends: Partial<DriverFacts>[] = [
      { offered: new Set() },
      { service_types: ['van_1.7m'] },
      { runsheets_won: 0 },
      { on_duty: true },
      { location: { ...PICKUP, server_time: secondsAgo(4000) } },
      { location: { ...PICKUP, server_time: secondsAgo(5) } },
    ];
    for (const mend of mends) {
      seen.push(exclusionOf(runsheet, driver('d', facts), PARAMETERS, NOW));
      Object.assign(facts, mend);
    }
    seen.push(exclusionOf(runsheet, driver('d', facts), PARAMETERS, NOW));
    expect(seen).toEqual([...EXCLUSION_RULES, undefined]);
  });
});

describe('eligibleDrivers', () => {
  it('orders the eligible nearest to the first pickup first, by great-circle distance, with distances', () => {
    const drivers = [
      driver('far', { location: { latitude: 1.4, longitude: 103.9, server_time: secondsAgo(1) } }),
      driver('near', { location: { latitude: 1.301, longitude: 103.8, server_time: secondsAgo(1) } }),
      driver('mid', { location: { latitude: 1.33, longitude: 103.8, server_time: secondsAgo(1) } }),
    ];
    const { eligible, excluded } = eligibleDrivers(located, drivers, PARAMETERS, NOW);
    expect(ids(eligible)).toEqual(['near', 'mid', 'far']);
    expect(eligible[0]!.distance_m).toBeCloseTo(distanceM(PICKUP, drivers[1]!.location!), 6);
    expect(excluded).toEqual(noExclusions());
  });

  it('breaks ties by driver id, whatever the input order', () => {
    const spot = { ...PICKUP, server_time: secondsAgo(1) };
    const drivers = ['d3', 'd1', 'd2'].map((id) => driver(id, { location: spot }));
    expect(ids(eligibleDrivers(located, drivers, PARAMETERS, NOW).eligible)).toEqual(['d1', 'd2', 'd3']);
    expect(ids(eligibleDrivers(located, [...drivers].reverse(), PARAMETERS, NOW).eligible)).toEqual(['d1', 'd2', 'd3']);
  });

  it('orders every driver by id, distance null, for a runsheet without coordinates', () => {
    const drivers = [driver('b'), driver('a', { location: undefined }), driver('c')];
    const { eligible } = eligibleDrivers({ id: 'RS-9' }, drivers, PARAMETERS, NOW);
    expect(eligible.map((e) => [e.driver.id, e.distance_m])).toEqual([
      ['a', null],
      ['b', null],
      ['c', null],
    ]);
  });

  it('counts each excluded driver under one rule: the counts add up to drivers − eligible', () => {
    const runsheet = { ...located, service_type: 'car' };
    const drivers = [
      driver('ok1'),
      driver('ok2', { service_types: ['car'] }),
      driver('offered', { offered: new Set(['RS-1']), on_duty: false }),
      driver('van', { service_types: ['van_1.7m'], on_duty: false }),
      driver('full', { runsheets_won: 1, location: undefined }),
      driver('off1', { on_duty: false }),
      driver('off2', { on_duty: false, location: undefined }),
      driver('lost', { location: undefined }),
      driver('stale', { location: { ...PICKUP, server_time: secondsAgo(7200) } }),
    ];
    const { eligible, excluded } = eligibleDrivers(runsheet, drivers, PARAMETERS, NOW);
    expect(ids(eligible).sort()).toEqual(['ok1', 'ok2']);
    expect(excluded).toEqual({
      already_offered: 1,
      service_type: 1,
      at_capacity: 1,
      off_duty: 2,
      no_location: 1,
      location_stale: 1,
    });
  });

  it('holds the sum on random plannings', () => {
    const random = seededRandom(34);
    for (let trial = 0; trial < 200; trial++) {
      const drivers = Array.from({ length: Math.floor(random() * 30) }, (_, i) =>
        driver(`d${i}`, {
          on_duty: random() < 0.7,
          location:
            random() < 0.8
              ? {
                  latitude: 1.2 + random() * 0.3,
                  longitude: 103.6 + random() * 0.4,
                  server_time: secondsAgo(random() * 4000),
                }
              : undefined,
          service_types: random() < 0.5 ? [] : [random() < 0.5 ? 'car' : 'van_1.7m'],
          runsheets_won: Math.floor(random() * 3),
          offered: new Set(random() < 0.2 ? ['RS-1'] : []),
        }),
      );
      const runsheet = { id: 'RS-1', ...(random() < 0.7 ? { pickup: PICKUP } : {}), service_type: 'car' };
      const parameters = { max_runsheets_per_driver: 2, max_location_age_s: 1800 };
      const { eligible, excluded } = eligibleDrivers(runsheet, drivers, parameters, NOW);
      const left = Object.values(excluded).reduce((a, b) => a + b, 0);
      expect(eligible.length + left).toBe(drivers.length);
      for (const { driver: d } of eligible) expect(exclusionOf(runsheet, d, parameters, NOW)).toBeUndefined();
      const distances = eligible.map((e) => e.distance_m ?? 0);
      expect(distances).toEqual([...distances].sort((a, b) => a - b));
    }
  });

  it('is empty with no drivers', () => {
    expect(eligibleDrivers(located, [], PARAMETERS, NOW)).toEqual({ eligible: [], excluded: noExclusions() });
  });
});

describe('unassignedReason', () => {
  const excluded = (counts: Partial<ReturnType<typeof noExclusions>>) => ({ ...noExclusions(), ...counts });

  it('says the contract’s example sentence', () => {
    const reason = unassignedReason({
      waves: 3,
      offers: { rejected: 5, expired: 4, closed: 0 },
      excluded: excluded({ already_offered: 9, off_duty: 6 }),
    });
    expect(reason).toEqual({
      code: 'no_driver_accepted',
      detail: '3 waves, 9 drivers: 5 declined, 4 let it expire; 6 other drivers off duty',
      waves: 3,
      offers: { rejected: 5, expired: 4, closed: 0 },
      not_asked: 0,
      excluded: excluded({ already_offered: 9, off_duty: 6 }),
    });
  });

  it('counts the available drivers the waves never reached and ends the sentence with them (issue 46.2)', () => {
    const reason = unassignedReason({
      waves: 2,
      offers: { rejected: 2, expired: 2, closed: 0 },
      excluded: excluded({ already_offered: 4, at_capacity: 3 }),
      notAsked: 1,
    });
    expect(reason).toMatchObject({ code: 'no_driver_accepted', not_asked: 1 });
    expect(reason.detail).toBe(
      '2 waves, 4 drivers: 2 declined, 2 let it expire; 3 other drivers at their runsheet limit; ' +
        '1 available driver not asked: offer it again to reach them',
    );
    // Nobody else left out: the unasked are the whole rest of the sentence.
    expect(
      unassignedReason({
        waves: 3,
        offers: { rejected: 0, expired: 3, closed: 0 },
        excluded: excluded({ already_offered: 3 }),
        notAsked: 2,
      }).detail,
    ).toBe('3 waves, 3 drivers: 3 let it expire; 2 available drivers not asked: offer it again to reach them');
  });

  it('speaks in the singular of one wave, one driver, one other driver', () => {
    expect(
      unassignedReason({
        waves: 1,
        offers: { rejected: 1, expired: 0, closed: 0 },
        excluded: excluded({ already_offered: 1, off_duty: 1 }),
      }).detail,
    ).toBe('1 wave, 1 driver declined; 1 other driver off duty');
    expect(
      unassignedReason({ waves: 1, offers: { rejected: 0, expired: 1, closed: 0 }, excluded: excluded({}) }).detail,
    ).toBe('1 wave, 1 driver let it expire; no other driver to offer it to');
    expect(
      unassignedReason({ waves: 2, offers: { rejected: 0, expired: 0, closed: 1 }, excluded: excluded({}) }).detail,
    ).toBe('2 waves, 1 driver had the offer closed by the system; no other driver to offer it to');
  });

  it('leaves out outcomes and rules that count zero, and names every other one in the rules’ order', () => {
    expect(
      unassignedReason({
        waves: 2,
        offers: { rejected: 0, expired: 2, closed: 1 },
        excluded: excluded({ already_offered: 3, location_stale: 2, service_type: 1, no_location: 1, at_capacity: 4 }),
      }).detail,
    ).toBe(
      '2 waves, 3 drivers: 2 let it expire, 1 offer closed by the system; 1 other driver without its service type, ' +
        '4 at their runsheet limit, 1 with no known location, 2 with no recent location',
    );
    expect(
      unassignedReason({ waves: 3, offers: { rejected: 2, expired: 0, closed: 2 }, excluded: excluded({}) }).detail,
    ).toBe('3 waves, 4 drivers: 2 declined, 2 offers closed by the system; no other driver to offer it to');
  });

  it('is no_eligible_driver when nobody could be offered it, with who was left out', () => {
    const none = { rejected: 0, expired: 0, closed: 0 };
    expect(unassignedReason({ waves: 0, offers: none, excluded: excluded({ off_duty: 4, no_location: 1 }) })).toEqual({
      code: 'no_eligible_driver',
      detail: 'No driver could be offered it: 4 drivers off duty, 1 with no known location',
      waves: 0,
      offers: none,
      not_asked: 0,
      excluded: excluded({ off_duty: 4, no_location: 1 }),
    });
    expect(unassignedReason({ waves: 0, offers: none, excluded: excluded({ at_capacity: 1 }) }).detail).toBe(
      'No driver could be offered it: 1 driver at their runsheet limit',
    );
    expect(unassignedReason({ waves: 0, offers: none, excluded: excluded({}) }).detail).toBe(
      'No driver could be offered it: the planning has no drivers',
    );
  });

  it('copies its counts: a later change to the caller’s objects does not change the reason', () => {
    const offers = { rejected: 1, expired: 0, closed: 0 };
    const counts = excluded({ already_offered: 1 });
    const reason = unassignedReason({ waves: 1, offers, excluded: counts });
    offers.rejected = 7;
    counts.off_duty = 3;
    expect(reason.offers.rejected).toBe(1);
    expect(reason.excluded.off_duty).toBe(0);
  });
});
