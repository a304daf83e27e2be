/**
 * The planning job's pairing (issue 26.3) on seeded instances, uniform and clustered points in a 20 km square. Prints
 * the total distance of the job's first candidates against the optimum computed independently (a min-cost flow, not
 * the Hungarian method the job uses; must be 1.000); nearest-first as it plays out (each runsheet won by its nearest
 * driver still free) against the same optimum; the distinct drivers named first by the job and by nearest-first (what
 * the job did before); the most offers any driver holds against its cap; the solve time at 1 000 runsheets × 200.
 */
import { distanceM } from '#shared/locations/geo';
import { type PairingDriver, type PairingRunsheet, pairCandidates } from '#shared/planning/pairing';
import { minCostAssignment } from '../test/support/min-cost-assignment.ts';
import { seededRandom } from '../test/support/random.ts';

const MAX_CANDIDATES = 5;

function instance(seed: number, runsheets: number, drivers: number, clustered: boolean) {
  const random = seededRandom(seed);
  const centres = Array.from({ length: 4 }, () => [random(), random()] as const);
  const point = () => {
    const centre = centres[Math.floor(random() * centres.length)]!;
    const [x, y] = clustered
      ? [centre[0] + (random() - 0.5) * 0.15, centre[1] + (random() - 0.5) * 0.15]
      : [random(), random()];
    return { latitude: 1.25 + x * 0.18, longitude: 103.7 + y * 0.18 };
  };
  return {
    runsheets: Array.from({ length: runsheets }, (_, i): PairingRunsheet => ({ id: `RS-${i}`, pickup: point() })),
    drivers: Array.from({ length: drivers }, (_, i): PairingDriver => ({ id: `d${i}`, location: point() })),
  };
}

/**
 * Nearest-first as it plays out: each runsheet in the planning's order is won by its nearest driver still free
 * (⌈R / D⌉ runsheets a driver), so a runsheet whose nearest driver went to an earlier one is sent further.
 */
function greedy(runsheets: PairingRunsheet[], drivers: PairingDriver[]) {
  const cap = Math.ceil(runsheets.length / drivers.length);
  const taken = new Array<number>(drivers.length).fill(0);
  let total = 0;
  for (const r of runsheets) {
    let best = -1;
    for (let d = 0; d < drivers.length; d++) {
      if (taken[d]! >= cap) continue;
      if (best < 0 || distanceM(r.pickup!, drivers[d]!.location!) < distanceM(r.pickup!, drivers[best]!.location!))
        best = d;
    }
    taken[best]!++;
    total += distanceM(r.pickup!, drivers[best]!.location!);
  }
  return total;
}

/** How many distinct drivers nearest-first names first (every runsheet its nearest driver). */
function nearestFirstDistinct(runsheets: PairingRunsheet[], drivers: PairingDriver[]) {
  return new Set(
    runsheets.map((r) => {
      const distances = drivers.map((d) => distanceM(r.pickup!, d.location!));
      return distances.indexOf(Math.min(...distances));
    }),
  ).size;
}

export function benchPairing() {
  const D = 40;
  console.log(
    `\n## Planning job pairing: first candidates against the optimum (${D} drivers, max_candidates ${MAX_CANDIDATES})`,
  );
  console.log(
    'points     | R × D    | job / optimum | greedy nearest / optimum | distinct first: job, nearest-first | most offers (cap)',
  );
  for (const clustered of [false, true]) {
    for (const R of [D / 2, D, 1.25 * D, 5 * D]) {
      const { runsheets, drivers } = instance(26_3 + R, R, D, clustered);
      const chosen = pairCandidates(runsheets, drivers, MAX_CANDIDATES);
      const job = chosen.reduce((sum, c, r) => sum + distanceM(runsheets[r]!.pickup!, drivers[c[0]!]!.location!), 0);
      const optimum = minCostAssignment(
        runsheets.map((r) => drivers.map((d) => distanceM(r.pickup!, d.location!))),
        Math.ceil(R / D),
      ).total;
      const offers = new Map<number, number>();
      for (const d of chosen.flat()) offers.set(d, (offers.get(d) ?? 0) + 1);
      console.log(
        [
          (clustered ? 'clustered' : 'uniform').padEnd(10),
          `${R} × ${D}`.padEnd(8),
          (job / optimum).toFixed(3).padStart(13),
          (greedy(runsheets, drivers) / optimum).toFixed(3).padStart(24),
          `${new Set(chosen.map((c) => c[0])).size}, ${nearestFirstDistinct(runsheets, drivers)} of ${Math.min(R, D)}`.padStart(
            35,
          ),
          `${Math.max(...offers.values())} (${Math.ceil((R * MAX_CANDIDATES) / D)})`.padStart(17),
        ].join(' | '),
      );
    }
  }
  for (const clustered of [false, true]) {
    const { runsheets, drivers } = instance(1000, 1000, 200, clustered);
    const started = performance.now();
    pairCandidates(runsheets, drivers, MAX_CANDIDATES);
    console.log(
      `solve 1 000 runsheets × 200 drivers (${clustered ? 'clustered' : 'uniform'}): ${(performance.now() - started).toFixed(0)} ms`,
    );
  }
}
