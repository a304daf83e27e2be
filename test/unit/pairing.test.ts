/** The planning job's pairing (contract 4.6): first candidates by a minimum-total-distance assignment, offers spread. */
import { describe, expect, it } from 'vitest';
import { distanceM } from '#shared/locations/geo';
import { type PairingDriver, type PairingRunsheet, pairCandidates } from '#shared/planning/pairing';
import { minCostAssignment } from '../support/min-cost-assignment.ts';
import { seededRandom } from '../support/random.ts';

/** Points in a square of about 20 km near Singapore, uniform or in a few clusters. */
function instance(seed: number, runsheets: number, drivers: number, clustered = false) {
  const random = seededRandom(seed);
  const centres = Array.from({ length: 3 }, () => [random(), random()] as const);
  const point = () => {
    const [x, y] = clustered
      ? centres[Math.floor(random() * centres.length)]!.map((c) => c + (random() - 0.5) * 0.1)
      : [random(), random()];
    return { latitude: 1.25 + x! * 0.18, longitude: 103.7 + y! * 0.18 };
  };
  return {
    runsheets: Array.from({ length: runsheets }, (_, i): PairingRunsheet => ({ id: `RS-${i}`, pickup: point() })),
    drivers: Array.from({ length: drivers }, (_, i): PairingDriver => ({ id: `d${i}`, location: point() })),
  };
}

const firstChoiceTotal = (runsheets: PairingRunsheet[], drivers: PairingDriver[], chosen: number[][]) =>
  chosen.reduce((sum, candidates, r) => sum + distanceM(runsheets[r]!.pickup!, drivers[candidates[0]!]!.location!), 0);

const counts = (indexes: number[]) =>
  indexes.reduce((tally, d) => tally.set(d, (tally.get(d) ?? 0) + 1), new Map<number, number>());

describe('pairCandidates', () => {
  it('gives each of two runsheets its own driver where nearest-first would send both to one', () => {
    // Driver A sits between the pickups, B is a little beyond the second: nearest-first offers A to both.
    const runsheets = [
      { id: 'R1', pickup: { latitude: 1.3, longitude: 103.8 } },
      { id: 'R2', pickup: { latitude: 1.3, longitude: 103.82 } },
    ];
    const drivers = [
      { id: 'A', location: { latitude: 1.3, longitude: 103.81 } },
      { id: 'B', location: { latitude: 1.3, longitude: 103.835 } },
    ];
    const chosen = pairCandidates(runsheets, drivers, 1);
    expect(chosen).toEqual([[0], [1]]);
  });

  for (const [label, clustered] of [
    ['uniform', false],
    ['clustered', true],
  ] as const) {
    for (const [R, D] of [
      [10, 20],
      [20, 20],
      [25, 20],
      [60, 12],
    ] as const) {
      it(`matches an independently computed optimum on ${label} points, ${R} runsheets × ${D} drivers`, () => {
        for (const seed of [1, 2, 3]) {
          const { runsheets, drivers } = instance(seed * 1000 + R + D, R, D, clustered);
          const chosen = pairCandidates(runsheets, drivers, 3);
          const cap = Math.ceil(R / D);
          const optimum = minCostAssignment(
            runsheets.map((r) => drivers.map((d) => distanceM(r.pickup!, d.location!))),
            cap,
          );
          expect(optimum.assigned).toBe(R);
          expect(firstChoiceTotal(runsheets, drivers, chosen) / optimum.total).toBeCloseTo(1, 9);
          expect(Math.max(...counts(chosen.map((c) => c[0]!)).values())).toBeLessThanOrEqual(cap);
        }
      });
    }
  }

  it('spreads offers: at most max_candidates distinct drivers a runsheet, at most ⌈R × max_candidates / D⌉ a driver', () => {
    const { runsheets, drivers } = instance(7, 50, 20, true);
    const chosen = pairCandidates(runsheets, drivers, 4);
    for (const candidates of chosen) {
      expect(candidates).toHaveLength(4);
      expect(new Set(candidates).size).toBe(4);
    }
    expect(Math.max(...counts(chosen.flat()).values())).toBeLessThanOrEqual(Math.ceil((50 * 4) / 20));
  });

  it('offers a runsheet to every driver when there are fewer drivers than max_candidates', () => {
    const { runsheets, drivers } = instance(8, 3, 2);
    expect(pairCandidates(runsheets, drivers, 5).map((c) => [...c].sort())).toEqual([
      [0, 1],
      [0, 1],
      [0, 1],
    ]);
  });

  it('puts runsheets without coordinates and drivers without a location in the planning order, after the others', () => {
    const here = { latitude: 1.3, longitude: 103.8 };
    const runsheets: PairingRunsheet[] = [{ id: 'unplaced' }, { id: 'placed', pickup: here }];
    const drivers: PairingDriver[] = [
      { id: 'unlocated-1' },
      { id: 'far', location: { latitude: 1.4, longitude: 103.9 } },
      { id: 'unlocated-2' },
      { id: 'near', location: { latitude: 1.301, longitude: 103.8 } },
    ];
    const [unplaced, placed] = pairCandidates(runsheets, drivers, 4);
    // The located runsheet: its assigned driver, then the other located one, then the unlocated in planning order.
    expect(placed).toEqual([3, 1, 0, 2]);
    // The runsheet without coordinates: the planning's order, its first candidate one with a first place left.
    expect(unplaced).toEqual([0, 1, 2, 3]);
  });

  it('answers nothing to pair when a planning has no runsheets or no drivers', () => {
    expect(pairCandidates([], instance(9, 0, 3).drivers, 5)).toEqual([]);
    expect(pairCandidates(instance(9, 3, 0).runsheets, [], 5)).toEqual([[], [], []]);
  });
});

describe('pairCandidates over eligible pairs only (contract 4.7: wave 1 applies the eligibility rules)', () => {
  it('never chooses a pair that `allowed` forbids, first or further, and still gives every runsheet its best allowed driver', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { runsheets, drivers } = instance(seed, 12, 9, seed % 2 === 0);
      const random = seededRandom(seed * 97);
      const forbidden = new Set<string>();
      runsheets.forEach((_, r) => {
        drivers.forEach((_, d) => {
          if (random() < 0.35) forbidden.add(`${r}:${d}`);
        });
      });
      const allowed = (r: number, d: number) => !forbidden.has(`${r}:${d}`);
      const chosen = pairCandidates(runsheets, drivers, 3, allowed);
      chosen.forEach((candidates, r) => {
        for (const d of candidates) expect(allowed(r, d), `runsheet ${r} offered to forbidden driver ${d}`).toBe(true);
        expect(new Set(candidates).size).toBe(candidates.length);
        // A runsheet with an allowed driver gets at least one.
        if (drivers.some((_, d) => allowed(r, d))) expect(candidates.length).toBeGreaterThan(0);
      });
    }
  });

  it('leaves a runsheet nobody may take without candidates; the others get theirs', () => {
    const { runsheets, drivers } = instance(7, 4, 6);
    const chosen = pairCandidates(runsheets, drivers, 2, (r) => r !== 0);
    expect(chosen[0]).toEqual([]);
    for (const candidates of chosen.slice(1)) expect(candidates).toHaveLength(2);
    // Their first candidates are all different drivers (R ≤ D).
    expect(new Set(chosen.slice(1).map((c) => c[0])).size).toBe(3);
  });
});
