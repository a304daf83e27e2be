/**
 * Which of a planning's drivers may be offered a runsheet (contract 4.7, "Eligible drivers"), and the reason a
 * dispatcher reads when none took it ("Unassigned, with its reason"). Pure: the caller reads the facts (duty states,
 * locations, offers and wins of the planning) and the clock; nothing here does I/O.
 *
 * A driver left out is counted under exactly one rule, the first it fails, judged in this order (so the counts add
 * up to drivers − eligible):
 *
 * 1. `already_offered`: offered this runsheet before (any wave). Judged first: such drivers are the ones the offers
 *    count (declined, let it expire, closed), so the other rules count only drivers who were never offered it.
 * 2. `service_type`: the runsheet's service type is not among the driver's (judged only when both are known: a
 *    runsheet without one, or a driver who lists none, passes).
 * 3. `at_capacity`: the driver has already won `max_runsheets_per_driver` runsheets of this planning.
 * 4. `off_duty`: the driver is off duty (X15).
 * 5. `no_location`: the runsheet has coordinates and the driver has no known location.
 * 6. `location_stale`: the runsheet has coordinates and the driver's location (its `server_time`) is older than
 *    `max_location_age_s`.
 *
 * From what this runsheet can never get from the driver to what a phone call can change: a driver counted
 * `off_duty` could take it if they came on duty, one counted `no_location` or `location_stale` is on duty and able
 * but their phone has not reported lately. A runsheet without coordinates judges no location rule.
 */
import { distanceM, type Point } from '#shared/locations/geo';

export const EXCLUSION_RULES = [
  'already_offered',
  'service_type',
  'at_capacity',
  'off_duty',
  'no_location',
  'location_stale',
] as const;
export type ExclusionRule = (typeof EXCLUSION_RULES)[number];
export type ExcludedCounts = Record<ExclusionRule, number>;

export interface EligibilityRunsheet {
  id: string;
  /** The runsheet's service type, when it has one (P5, or its imported tasks' job). */
  service_type?: string | null | undefined;
  /** Its first pickup's coordinates, when it has them: the place its drivers are measured from. */
  pickup?: Point | undefined;
}

export interface DriverFacts {
  id: string;
  on_duty: boolean;
  /** The driver's current location and when the service stored it (`server_time`, ISO 8601). */
  location?: (Point & { server_time: string }) | undefined;
  /** `driver_profile.service_types`: empty means not known, which no runsheet's type excludes. */
  service_types: readonly string[];
  /** How many runsheets of this planning the driver has already won. */
  runsheets_won: number;
  /** The ids of the runsheets of this planning the driver has already been offered. */
  offered: ReadonlySet<string>;
}

export interface EligibilityParameters {
  max_runsheets_per_driver: number;
  max_location_age_s: number;
}

export interface EligibleDriver {
  driver: DriverFacts;
  /** Great-circle metres from the driver to the first pickup; null when the runsheet has no coordinates. */
  distance_m: number | null;
}

export interface Eligibility {
  /** Nearest to the first pickup first; ties (and every driver of a runsheet without coordinates) by driver id. */
  eligible: EligibleDriver[];
  excluded: ExcludedCounts;
}

export const noExclusions = (): ExcludedCounts =>
  Object.fromEntries(EXCLUSION_RULES.map((rule) => [rule, 0])) as ExcludedCounts;

/** The first rule (in the order above) that leaves `driver` out of `runsheet`, or undefined when it is eligible. */
export function exclusionOf(
  runsheet: EligibilityRunsheet,
  driver: DriverFacts,
  parameters: EligibilityParameters,
  nowMs: number,
): ExclusionRule | undefined {
  if (driver.offered.has(runsheet.id)) return 'already_offered';
  const type = runsheet.service_type;
  if (type && driver.service_types.length > 0 && !driver.service_types.includes(type)) return 'service_type';
  if (driver.runsheets_won >= parameters.max_runsheets_per_driver) return 'at_capacity';
  if (!driver.on_duty) return 'off_duty';
  if (runsheet.pickup) {
    if (!driver.location) return 'no_location';
    // A time that does not parse proves nothing fresh: stale. One from a clock ahead of ours is fresh.
    const ageS = (nowMs - Date.parse(driver.location.server_time)) / 1000;
    if (!(ageS <= parameters.max_location_age_s)) return 'location_stale';
  }
  return undefined;
}

/** The drivers that may be offered `runsheet` now, nearest first, and how many each rule left out. */
export function eligibleDrivers(
  runsheet: EligibilityRunsheet,
  drivers: readonly DriverFacts[],
  parameters: EligibilityParameters,
  nowMs: number,
): Eligibility {
  const excluded = noExclusions();
  const eligible: EligibleDriver[] = [];
  for (const driver of drivers) {
    const rule = exclusionOf(runsheet, driver, parameters, nowMs);
    if (rule) {
      excluded[rule]++;
      continue;
    }
    const pickup = runsheet.pickup;
    // Eligible for a runsheet with coordinates implies a location (rule 5).
    eligible.push({ driver, distance_m: pickup && driver.location ? distanceM(pickup, driver.location) : null });
  }
  eligible.sort(
    (a, b) =>
      (a.distance_m ?? 0) - (b.distance_m ?? 0) || (a.driver.id < b.driver.id ? -1 : a.driver.id > b.driver.id ? 1 : 0),
  );
  return { eligible, excluded };
}

export interface OfferCounts {
  /** Declined by the driver (R7). */
  rejected: number;
  /** Not answered by `expired_time`. */
  expired: number;
  /** Closed by the system for any reason but another driver winning it (`driver_at_capacity`, …). */
  closed: number;
}

export interface UnassignedReason {
  code: 'no_driver_accepted' | 'no_eligible_driver';
  detail: string;
  waves: number;
  offers: OfferCounts;
  /** Eligible drivers never offered it because the waves ran out (X17 reaches them). */
  not_asked: number;
  excluded: ExcludedCounts;
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** How a dispatcher reads the drivers each rule left out ("6 … off duty"). */
const EXCLUDED_WORDS: Record<ExclusionRule, string> = {
  already_offered: 'offered it before',
  service_type: 'without its service type',
  at_capacity: 'at their runsheet limit',
  off_duty: 'off duty',
  no_location: 'with no known location',
  location_stale: 'with no recent location',
};

/**
 * The runsheet's `unassigned_reason` after its last wave (`waves` sent, `offers` their outcomes) or when nobody was
 * left to offer it to, with `excluded` as the last judgement counted it. `detail` is the sentence a dispatcher
 * reads: "3 waves, 9 drivers: 5 declined, 4 let it expire; 6 other drivers off duty". Each offer went to a driver
 * of its own (a runsheet is never offered twice to one driver), so the offers count the drivers who were asked.
 */
export function unassignedReason(input: {
  waves: number;
  offers: OfferCounts;
  excluded: ExcludedCounts;
  /** Eligible drivers left when the last wave closed (0 when nobody was left to ask). */
  notAsked?: number;
}) {
  const { waves, offers, excluded, notAsked = 0 } = input;
  const asked = offers.rejected + offers.expired + offers.closed;
  // Drivers who were offered it are told of in the offers' part; the rules' part speaks of the others.
  const rules = EXCLUSION_RULES.filter((rule) => excluded[rule] > 0 && !(asked > 0 && rule === 'already_offered'));
  const left = rules.map((rule, i) => {
    const n = excluded[rule];
    const who = i > 0 ? `${n}` : asked > 0 ? count(n, 'other driver', 'other drivers') : count(n, 'driver', 'drivers');
    return `${who} ${EXCLUDED_WORDS[rule]}`;
  });
  let detail: string;
  if (asked === 0) {
    detail =
      left.length > 0
        ? `No driver could be offered it: ${left.join(', ')}`
        : 'No driver could be offered it: the planning has no drivers';
  } else {
    const outcomes = [
      offers.rejected > 0 ? `${offers.rejected} declined` : '',
      offers.expired > 0 ? `${offers.expired} let it expire` : '',
      offers.closed > 0 ? `${count(offers.closed, 'offer', 'offers')} closed by the system` : '',
    ].filter(Boolean);
    const single = [
      offers.rejected > 0 ? 'declined' : '',
      offers.expired > 0 ? 'let it expire' : '',
      offers.closed > 0 ? 'had the offer closed by the system' : '',
    ].find(Boolean);
    const who = asked === 1 ? `1 driver ${single}` : `${asked} drivers: ${outcomes.join(', ')}`;
    const others = left.length > 0 ? left.join(', ') : notAsked > 0 ? '' : 'no other driver to offer it to';
    detail = [`${count(waves, 'wave', 'waves')}, ${who}`, others].filter(Boolean).join('; ');
  }
  // Contract 4.7: the drivers the waves never reached are said last, with what reaches them.
  if (notAsked > 0) {
    detail += `; ${count(notAsked, 'available driver', 'available drivers')} not asked: offer it again to reach them`;
  }
  const reason: UnassignedReason = {
    code: asked > 0 ? 'no_driver_accepted' : 'no_eligible_driver',
    detail,
    waves,
    offers: { ...offers },
    not_asked: notAsked,
    excluded: { ...excluded },
  };
  return reason;
}
