/**
 * Which drivers the planning job offers each runsheet to (contract 4.6). The whole planning is looked at at once:
 *
 * - First candidates: an assignment of runsheets to drivers that minimises the total great-circle distance from the
 *   drivers' current locations to the runsheets' first pickups, no driver the first candidate of more than ⌈R / D⌉
 *   runsheets. Solved by the Hungarian method (`munkres`) over the located runsheets and ⌈R / D⌉ copies of each
 *   located driver, so with R ≤ D every located runsheet gets a driver of its own.
 * - A runsheet left without one (no coordinates, or more located runsheets than located drivers' places) takes the
 *   first driver with a place left: located drivers nearest first, then the rest in the planning's order.
 * - Further candidates, up to `max_candidates` a runsheet: round by round, each runsheet in the planning's order takes
 *   its nearest driver it does not have yet, skipping drivers already offered ⌈R × max_candidates / D⌉ runsheets of
 *   this job, so offers spread over the fleet.
 */
import { munkres } from 'munkres';
import { distanceM } from '#shared/locations/geo';

export interface Point {
  latitude: number;
  longitude: number;
}

export interface PairingRunsheet {
  id: string;
  pickup?: Point;
}

export interface PairingDriver {
  id: string;
  location?: Point;
}

/**
 * The candidate drivers' indexes of every runsheet (same order as `runsheets`), its first candidate first. Driver
 * indexes point into `drivers`, which is the planning's order.
 */
export function pairCandidates(
  runsheets: readonly PairingRunsheet[],
  drivers: readonly PairingDriver[],
  maxCandidates: number,
  /** Whether runsheet `r` may be offered to driver `d` (contract 4.7's eligibility); every pair when absent. */
  allowed: (r: number, d: number) => boolean = () => true,
): number[][] {
  const R = runsheets.length;
  const D = drivers.length;
  const chosen: number[][] = runsheets.map(() => []);
  if (R === 0 || D === 0) return chosen;
  const firstCap = Math.ceil(R / D);
  const offerCap = Math.ceil((R * maxCandidates) / D);
  const perRunsheet = Math.min(maxCandidates, D);
  const offers = new Array<number>(D).fill(0);

  // Every runsheet's drivers in order of preference: located ones nearest first, then the rest in planning order.
  const ranking = runsheets.map((runsheet, r) => rank(runsheet.pickup, drivers).filter((d) => allowed(r, d)));

  // First candidates by a minimum-total-distance assignment over the located runsheets and located drivers.
  const located = runsheets.flatMap((runsheet, index) => (runsheet.pickup ? [index] : []));
  const locatedDrivers = drivers.flatMap((driver, index) => (driver.location ? [index] : []));
  if (located.length > 0 && locatedDrivers.length > 0) {
    const copies = Math.min(firstCap, located.length);
    const slots = locatedDrivers.flatMap((driver) => new Array<number>(copies).fill(driver));
    // A pair that may not be offered costs more than any distance on Earth: chosen only when nothing else is left,
    // and then dropped.
    const cost = located.map((r) =>
      slots.map((d) => (allowed(r, d) ? distanceM(runsheets[r]!.pickup!, drivers[d]!.location!) : FORBIDDEN)),
    );
    for (const [row, column] of munkres(cost)) {
      const driver = slots[column]!;
      if (!allowed(located[row]!, driver)) continue;
      chosen[located[row]!]!.push(driver);
      offers[driver]!++;
    }
  }
  // Runsheets still without a first candidate: the best-ranked driver with a first place left.
  for (let r = 0; r < R; r++) {
    if (chosen[r]!.length > 0) continue;
    const driver = ranking[r]!.find((d) => offers[d]! < firstCap);
    if (driver === undefined) continue;
    chosen[r]!.push(driver);
    offers[driver]!++;
  }
  // Further candidates, one round at a time so that no runsheet takes all the near drivers before another has any.
  for (let round = 1; round < perRunsheet; round++) {
    for (let r = 0; r < R; r++) {
      const have = chosen[r]!;
      const driver = ranking[r]!.find((d) => offers[d]! < offerCap && !have.includes(d));
      if (driver === undefined) continue;
      have.push(driver);
      offers[driver]!++;
    }
  }
  return chosen;
}

/** Farther than any two places on Earth (about 20 000 km apart at most). */
const FORBIDDEN = 1e12;

function rank(pickup: Point | undefined, drivers: readonly PairingDriver[]): number[] {
  const order = drivers.map((_, index) => index);
  if (!pickup) return order;
  const distance = drivers.map((driver) =>
    driver.location ? distanceM(pickup, driver.location) : Number.POSITIVE_INFINITY,
  );
  return order.sort((a, b) => distance[a]! - distance[b]! || a - b);
}
