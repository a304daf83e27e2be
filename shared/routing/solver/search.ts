/**
 * The search: regret insertion builds a first solution with every task it can place, then adaptive large neighbourhood
 * search (Ropke & Pisinger 2006) improves it: each iteration removes q tasks with one of the removal operators and
 * puts them back with greedy or regret-k insertion (with or without noise), the operators chosen by weights that
 * adapt to how often each found a new best, a better or an accepted solution; simulated annealing accepts a worse
 * solution with a probability that falls as the temperature cools over the run. For objective `vehicles` a reduction
 * phase first tries to empty one vehicle at a time (its tasks must find room in the others) before the distance search.
 */

import { DeliverySearch } from './delivery-search.ts';
import { ALL_ROUTES_UP_TO, Inserter } from './insertion.ts';
import type { Instance } from './instance.ts';
import { InterRoute } from './inter-route.ts';
import { LocalSearch } from './local-search.ts';
import type { SolveOptions } from './model.ts';
import type { Random } from './random.ts';
import { type Removal, randomRemoval, routeRemoval, shawRemoval, takeOut, worstRemoval } from './removal.ts';
import { type CostWeights, costOf, costWeights, Solution } from './solution.ts';

const REMOVALS: readonly Removal[] = [randomRemoval, worstRemoval, shawRemoval, routeRemoval];
/** Insertions: [regret, noise?]. */
const INSERTIONS: readonly (readonly [number, boolean])[] = [
  [1, false],
  [2, false],
  [3, false],
  [1, true],
  [2, true],
  [3, true],
];
const SEGMENT = 100;
const REACTION = 0.1;
const SCORE_BEST = 33;
const SCORE_BETTER = 9;
const SCORE_ACCEPTED = 13;
/** A solution this much (relative) worse than the first is accepted with probability 1/2 at the start. */
const START_WORSE = 0.05;
/** The temperature at the end, relative to the start. */
const END_TEMPERATURE = 0.002;
/**
 * Local search polishes a candidate whose cost is below the current solution's plus this share of its distance: 0,
 * only improving candidates (polishing near-misses too cost a quarter of the iterations for no measurable gain).
 */
const POLISH_WITHIN = 0;
/**
 * The large-problem parts of the search, switchable for the benchmark's ablation (`bench/routing-solver.ts
 * --parts=on --ablate=…`); the solver itself never changes them.
 * - `inter`: inter-route relocate and exchange on granular neighbourhoods (see inter-route.ts).
 * - `minimise`: route minimisation (emptying the smallest routes) on the first plan and between the phases.
 * - `consolidate`: the share of the time spent with a price on each vehicle used (objective `distance`), `lambda`
 *   times a round trip from the depot to the mean task; the rest is spent on distance alone.
 * - `qMax`: the most tasks an ALNS iteration removes; `startWorse`: the simulated annealing's starting temperature
 *   (a solution this much worse, relative, is accepted with probability 1/2 at the start).
 */
// Off by default: measured at 60 CPU-s on the six homberger instances, the parts together were worse than the search
// without them on four of six (mean gap 22.1 % against 20.3 %, docs/routing.md "At a thousand customers"); the
// benchmark switches them on (`--parts=on`) until they pay.
export const LARGE = {
  inter: false,
  minimise: false,
  consolidate: 0,
  lambda: 1,
  qMax: 100,
  // 0.5 %: at 5 % (the first value) the first half of a run accepted nearly anything (the moves of an iteration are
  // worth well under 1 % of a thousand-stop plan), so a longer limit wandered longer and could end worse (the city day
  // at 300 s against 10 s); measured at 30 CPU-s on the six homberger instances, 8.81 % against 9.58 %.
  startWorse: 0.005,
  /** Inter-route moves of depot loads as delivery-only stops (delivery-search.ts). */
  delivery: true,
  /** ALNS's repair opens no vehicle beyond the current plan's unless a task would be left out. */
  fleet: false,
  /** Where the delivery moves run: polish a candidate within this share of the current distance (POLISH_WITHIN). */
  polish: 0.02,
  /** The delivery moves of a polished candidate start from the tasks it removed and put back (else its routes'). */
  seeds: true,
  /** The delivery moves' richer kinds: cross-exchange, moves within a route, runs reversed (delivery-search.ts). */
  cross: true,
  intra: true,
  reverse: true,
  /** First plans built (each to its local optimum), the best kept; while under this share of the time. */
  starts: 1,
  startShare: 0.3,
  /** The share of the time kept at the end for the richer kinds on the best plan (0: none). */
  finish: 0.05,
  /** The richer kinds on the first plans too. */
  richFirst: false,
  /** The richer kinds on each new best of the ALNS too. */
  richBest: false,
  /** The richer kinds on every polished candidate too (else on the first plan and each new best only). */
  richEvery: false,
};

export interface SearchResult {
  readonly best: Solution;
  readonly iterations: number;
  readonly stopped: 'time_limit' | 'converged';
}

interface Clock {
  readonly startMs: number;
  readonly options: SolveOptions;
  iterations: number;
  lastProgressMs: number;
  bestDistance: number;
}

function timeUp(clock: Clock): boolean {
  const { options } = clock;
  if (options.maxIterations !== undefined && clock.iterations >= options.maxIterations) return true;
  return options.now() >= options.deadlineMs;
}

/** How far the run is, 0..1: by iterations when a budget is given (deterministic), else by the clock. */
function progressOf(clock: Clock, phaseStartMs: number, phaseStartIteration: number): number {
  const { options } = clock;
  if (options.maxIterations !== undefined) {
    const span = options.maxIterations - phaseStartIteration;
    return span <= 0 ? 1 : Math.min(1, (clock.iterations - phaseStartIteration) / span);
  }
  const span = options.deadlineMs - phaseStartMs;
  return span <= 0 ? 1 : Math.min(1, Math.max(0, (options.now() - phaseStartMs) / span));
}

/** Records the best plan's distance (when given) and tells `onProgress` at most every `progressEveryMs`. */
function report(clock: Clock, best?: Solution): void {
  const { options } = clock;
  if (best) clock.bestDistance = best.distance();
  if (!options.onProgress) return;
  const every = options.progressEveryMs ?? 2000;
  const now = options.now();
  if (now - clock.lastProgressMs < every) return;
  clock.lastProgressMs = now;
  options.onProgress({ bestDistanceM: clock.bestDistance, elapsedMs: now - clock.startMs });
}

function pick(weights: Float64Array, random: Random): number {
  let total = 0;
  for (const w of weights) total += w;
  let x = random.next() * total;
  for (let i = 0; i < weights.length; i++) {
    x -= weights[i]!;
    if (x < 0) return i;
  }
  return weights.length - 1;
}

/**
 * Local search on the routes changed since the dirty flags were cleared: on large problems first the inter-route moves
 * (relocate, exchange) of their tasks within their granular neighbourhoods, then intra-route 2-opt and or-opt on
 * every route changed.
 */
function improveDirty(
  solution: Solution,
  local: LocalSearch,
  inter?: InterRoute,
  delivery?: DeliverySearch,
  /** The tasks the delivery moves start from (a move re-queues what it touches); absent: the changed routes' tasks. */
  seeds?: readonly number[],
): void {
  const { dirty } = solution;
  if (delivery) {
    let tasks = seeds;
    if (!tasks) {
      const all: number[] = [];
      for (let r = 0; r < dirty.length; r++)
        if (dirty[r] === 1) for (const node of solution.routes[r]!.nodes) if ((node & 1) === 1) all.push(node >> 1);
      tasks = all;
    }
    delivery.improve(solution, tasks);
  }
  if (inter) {
    const tasks: number[] = [];
    for (let r = 0; r < dirty.length; r++)
      if (dirty[r] === 1) for (const node of solution.routes[r]!.nodes) if ((node & 1) === 0) tasks.push(node >> 1);
    inter.improve(solution, tasks, INTER_PASSES);
  }
  const changed: number[] = [];
  for (let r = 0; r < dirty.length; r++) if (dirty[r] === 1) changed.push(r);
  for (const r of changed) local.improve(solution, r);
  dirty.fill(0);
}

/**
 * The delivery moves' kinds: every ALNS candidate gets the cheap inter-route ones (relocate, swap, 2-opt*, or-opt);
 * a first plan and a new best also get the richer ones LARGE switches on (cross-exchange, moves within a route). Sets
 * the richer kinds and says whether any is on.
 */
function richKinds(delivery: DeliverySearch): boolean {
  Object.assign(delivery.kinds, { cross: LARGE.cross, intra: LARGE.intra, reverse: LARGE.reverse });
  return LARGE.cross || LARGE.intra;
}

function baseKinds(delivery: DeliverySearch): void {
  Object.assign(delivery.kinds, { cross: LARGE.richEvery && LARGE.cross, intra: LARGE.richEvery && LARGE.intra });
}

/** Passes of inter-route moves over the tasks of the routes an ALNS iteration changed. */
const INTER_PASSES = 2;

function plannableUnplanned(solution: Solution): number[] {
  const out: number[] = [];
  const { inst } = solution;
  for (let t = 0; t < inst.tasks; t++) if (solution.taskRoute[t]! < 0 && inst.impossible[t] === null) out.push(t);
  return out;
}

class Alns {
  private readonly removalWeights = new Float64Array(REMOVALS.length).fill(1);
  private readonly insertionWeights = new Float64Array(INSERTIONS.length).fill(1);
  private readonly removalScores = new Float64Array(REMOVALS.length);
  private readonly insertionScores = new Float64Array(INSERTIONS.length);
  private readonly removalUses = new Float64Array(REMOVALS.length);
  private readonly insertionUses = new Float64Array(INSERTIONS.length);

  constructor(
    private readonly inst: Instance,
    private readonly inserter: Inserter,
    private readonly local: LocalSearch,
    private readonly weights: CostWeights,
    private readonly random: Random,
    private readonly clock: Clock,
    private readonly inter?: InterRoute,
    private readonly delivery?: DeliverySearch,
  ) {}

  /**
   * Improves `start` until the clock or the budget says stop, `done` says so, or no new best came for `patience`
   * iterations; returns the best solution and whether it converged.
   */
  run(
    start: Solution,
    options: {
      patience: number;
      endMs: number;
      endIteration: number;
      done?: (best: Solution) => boolean;
      report: boolean;
    },
  ): { best: Solution; converged: boolean } {
    const { inst, inserter, weights, random, clock } = this;
    const current = start.clone();
    const candidate = start.clone();
    const best = start.clone();
    let currentCost = costOf(current, weights);
    let bestCost = currentCost;
    const phaseStartMs = clock.options.now();
    const phaseStartIteration = clock.iterations;
    const large = inst.tasks > ALL_ROUTES_UP_TO;
    // Near-misses are polished only where the delivery moves run (cheap O(1) moves; elsewhere they cost iterations).
    const polishWithin = large && this.delivery ? LARGE.polish : POLISH_WITHIN;
    const capFleet = large && LARGE.fleet && current.allowed.every((a) => a === 1);
    const startWorse = large ? LARGE.startWorse : START_WORSE;
    const t0 = Math.max(1e-9, (startWorse * Math.max(current.distance(), 1)) / Math.LN2);
    let sinceBest = 0;
    const plannable = inst.impossible.filter((c) => c === null).length;
    const qMin = Math.min(4, plannable);
    const qMax = Math.max(qMin, Math.min(large ? LARGE.qMax : 100, Math.round(0.4 * plannable)));
    const noise = 0.025 * inst.maxEdge;
    let segment = 0;
    if (options.done?.(best)) return { best, converged: true };
    while (!timeUp(clock) && clock.iterations < options.endIteration && clock.options.now() < options.endMs) {
      if (sinceBest >= options.patience) return { best, converged: true };
      clock.iterations++;
      sinceBest++;
      const frac = Math.min(1, progressOf(clock, phaseStartMs, phaseStartIteration));
      const temperature = t0 * END_TEMPERATURE ** frac;
      const ri = pick(this.removalWeights, random);
      const ii = pick(this.insertionWeights, random);
      const [regret, noisy] = INSERTIONS[ii]!;
      candidate.copyFrom(current);
      candidate.dirty.fill(0);
      const q = random.between(qMin, qMax);
      const removed = REMOVALS[ri]!(candidate, q, random);
      this.removalUses[ri]!++;
      this.insertionUses[ii]!++;
      if (removed.length > 0 && takeOut(candidate, removed)) {
        const pending = plannableUnplanned(candidate);
        random.shuffle(pending);
        const insertOptions = { regret, noise: noisy ? noise : 0, vehicleCost: weights.vehicle };
        if (capFleet) {
          // The fleet of the current plan only; a vehicle more only for what would be left out.
          for (let v = 0; v < inst.vehicles; v++) candidate.allowed[v] = current.routes[v]!.nodes.length > 0 ? 1 : 0;
          const left = inserter.insert(candidate, pending, insertOptions, random);
          candidate.allowed.set(current.allowed);
          if (left.length > 0) inserter.insert(candidate, left, insertOptions, random);
        } else inserter.insert(candidate, pending, insertOptions, random);
        let cost = costOf(candidate, weights);
        // Polish only what might be kept: a candidate near the current solution.
        if (cost < currentCost + polishWithin * current.distance()) {
          improveDirty(candidate, this.local, this.inter, this.delivery, LARGE.seeds ? removed : undefined);
          cost = costOf(candidate, weights);
          // A new best gets the richer moves too (too dear for every candidate: a fifth of the iterations on R2).
          if (cost < bestCost - 1e-9 && this.delivery && LARGE.richBest && richKinds(this.delivery)) {
            improveDirty(candidate, this.local, this.inter, this.delivery, removed);
            baseKinds(this.delivery);
            cost = costOf(candidate, weights);
          }
        }
        let score = 0;
        if (cost < bestCost - 1e-9) {
          bestCost = cost;
          best.copyFrom(candidate);
          sinceBest = 0;
          score = SCORE_BEST;
          if (options.report) report(clock, best);
        } else if (cost < currentCost - 1e-9) score = SCORE_BETTER;
        const accepted =
          cost < currentCost - 1e-9 ||
          cost <= currentCost + 1e-9 ||
          (cost > currentCost + 1e-9 && random.next() < Math.exp(-(cost - currentCost) / temperature));
        if (accepted) {
          if (score === 0) score = SCORE_ACCEPTED;
          current.copyFrom(candidate);
          currentCost = cost;
        }
        this.removalScores[ri]! += score;
        this.insertionScores[ii]! += score;
        if (score === SCORE_BEST && options.done?.(best)) return { best, converged: true };
      }
      if (++segment === SEGMENT) {
        segment = 0;
        this.adapt();
      }
      // The last complete plan's distance (the reduction phase's own best may leave tasks out).
      if (clock.options.onProgress) report(clock);
    }
    return { best, converged: false };
  }

  private adapt(): void {
    const update = (w: Float64Array, s: Float64Array, u: Float64Array) => {
      for (let i = 0; i < w.length; i++) {
        if (u[i]! > 0) w[i] = Math.max(0.05, w[i]! * (1 - REACTION) + (REACTION * s[i]!) / u[i]!);
        s[i] = 0;
        u[i] = 0;
      }
    };
    update(this.removalWeights, this.removalScores, this.removalUses);
    update(this.insertionWeights, this.insertionScores, this.insertionUses);
  }
}

/** Vehicle reduction: empty one used vehicle at a time, its tasks to find room in the others, until one fails. */
function reduceVehicles(
  start: Solution,
  inst: Instance,
  inserter: Inserter,
  local: LocalSearch,
  weights: CostWeights,
  random: Random,
  clock: Clock,
  end: { ms: number; iteration: number },
  patience: number,
): Solution {
  let best = start;
  let failures = 0;
  while (failures < 3 && !timeUp(clock) && clock.iterations < end.iteration && clock.options.now() < end.ms) {
    if (best.unplanned() > 0) return best;
    const used = best.routes.filter((r) => r.nodes.length > 0);
    if (used.length <= 1) return best;
    used.sort((x, y) => x.nodes.length - y.nodes.length || x.vehicle - y.vehicle);
    const victim = used[Math.min(failures, used.length - 1)]!;
    const trial = best.clone();
    trial.allowed.fill(0);
    for (const r of used) if (r !== victim) trial.allowed[r.vehicle] = 1;
    const tasks = victim.nodes.filter((node) => (node & 1) === 0).map((node) => node >> 1);
    if (!takeOut(trial, tasks)) {
      failures++;
      continue;
    }
    inserter.insert(trial, plannableUnplanned(trial), { regret: 2, noise: 0, vehicleCost: 0 }, random);
    const alns = new Alns(inst, inserter, local, { vehicle: 0, unplanned: weights.unplanned }, random, clock);
    const { best: found } = alns.run(trial, {
      patience,
      endMs: end.ms,
      endIteration: end.iteration,
      done: (s) => s.unplanned() === 0,
      report: false,
    });
    if (found.unplanned() === 0) {
      found.allowed.fill(1);
      best = found;
      failures = 0;
      report(clock, best);
    } else failures++;
  }
  return best;
}

export function search(
  inst: Instance,
  objective: 'distance' | 'vehicles',
  options: SolveOptions,
  random: Random,
  /** A warm start (starting-state.ts): the search begins from it, the tasks it leaves out inserted first. */
  initial?: Solution,
): SearchResult {
  const weights = costWeights(inst, objective);
  const clock: Clock = {
    startMs: options.now(),
    options,
    iterations: 0,
    // The first plan is reported as soon as it is built (X24's `progress` while solving), then every progressEveryMs.
    lastProgressMs: Number.NEGATIVE_INFINITY,
    bestDistance: 0,
  };
  const inserter = new Inserter(inst);
  let solution = initial ?? new Solution(inst);
  const tasks: number[] = [];
  for (let t = 0; t < inst.tasks; t++) if (inst.impossible[t] === null) tasks.push(t);
  if (initial) {
    const pending = plannableUnplanned(solution);
    if (pending.length > 0)
      inserter.insert(solution, pending, { regret: 2, noise: 0, vehicleCost: weights.vehicle }, random);
  } else if (inst.tasks <= ALL_ROUTES_UP_TO)
    inserter.insert(solution, tasks, { regret: 2, noise: 0, vehicleCost: weights.vehicle }, random);
  else {
    // Most urgent first: the earliest drop-off close, then the earliest pickup close.
    const order = tasks
      .slice()
      .sort(
        (a, b) => inst.close[2 * a + 1]! - inst.close[2 * b + 1]! || inst.close[2 * a]! - inst.close[2 * b]! || a - b,
      );
    const left = inserter.insertInOrder(solution, order, weights.vehicle);
    if (left.length > 0) inserter.insert(solution, left, { regret: 2, noise: 0, vehicleCost: weights.vehicle }, random);
  }
  const local = new LocalSearch(inst);
  // Large problems: inter-route moves on granular neighbourhoods, then route minimisation, on the first plan.
  const large = inst.tasks > ALL_ROUTES_UP_TO;
  const inter = large && LARGE.inter ? new InterRoute(inst) : undefined;
  if (inter) inter.stop = () => timeUp(clock);
  const delivery = large && LARGE.delivery ? new DeliverySearch(inst) : undefined;
  if (delivery) {
    delivery.stop = () => timeUp(clock);
    richKinds(delivery);
  }
  const deliveryUsed = delivery?.applies() ? delivery : undefined;
  // What one vehicle less is worth while consolidating (objective distance) or always (objective vehicles).
  const lambda = objective === 'vehicles' ? weights.vehicle : LARGE.lambda * roundTrip(inst);
  const minimise = (s: Solution) => {
    if (!large || !LARGE.minimise) return;
    const helper = inter ?? new InterRoute(inst);
    helper.stop = () => timeUp(clock);
    s.dirty.fill(0);
    if (helper.minimiseRoutes(s, lambda, s.used()) > 0) improveDirty(s, local, inter);
  };
  solution.dirty.fill(1);
  if (delivery && !LARGE.richFirst) baseKinds(delivery);
  improveDirty(solution, local, inter, deliveryUsed);
  // Large depot-load problems: more first plans, each built in another order and taken to its local optimum of the
  // delivery moves (VROOM's way, which runs no metaheuristic), the best kept; until LARGE.startShare of the time.
  if (large && !initial && deliveryUsed && LARGE.starts > 1) {
    let bestCost = costOf(solution, weights);
    const budgetEnd = options.now() + (options.deadlineMs - options.now()) * LARGE.startShare;
    for (let k = 1; k < LARGE.starts; k++) {
      if (timeUp(clock) || (options.maxIterations === undefined && options.now() >= budgetEnd)) break;
      const other = new Solution(inst);
      const { order, vehicleCost } = startVariant(inst, tasks, k, weights.vehicle, random);
      const left = inserter.insertInOrder(other, order, vehicleCost);
      if (left.length > 0) inserter.insert(other, left, { regret: 2, noise: 0, vehicleCost: weights.vehicle }, random);
      other.dirty.fill(1);
      improveDirty(other, local, inter, deliveryUsed);
      const cost = costOf(other, weights);
      if (cost < bestCost - 1e-9) {
        bestCost = cost;
        solution = other;
      }
    }
  }
  if (delivery) baseKinds(delivery);
  minimise(solution);
  report(clock, solution);
  if (tasks.length === 0) return { best: solution, iterations: 0, stopped: 'converged' };
  const patience = Math.max(10_000, 100 * tasks.length);
  // Objective vehicles: up to 60 % of the time empties vehicles one by one, the rest shortens the plan.
  if (objective === 'vehicles') {
    const share = 0.6;
    const end =
      options.maxIterations !== undefined
        ? { ms: Number.POSITIVE_INFINITY, iteration: Math.floor(options.maxIterations * share) }
        : { ms: options.now() + (options.deadlineMs - options.now()) * share, iteration: Number.POSITIVE_INFINITY };
    solution = reduceVehicles(solution, inst, inserter, local, weights, random, clock, end, patience / 5);
  }
  // Large problems, objective distance: first a share of the time with a price on every vehicle used (fewer, fuller
  // routes: ALNS's repair would otherwise open a vehicle wherever the nearest routes are full), then distance alone.
  if (large && objective === 'distance' && LARGE.consolidate > 0) {
    const share = LARGE.consolidate;
    const end =
      options.maxIterations !== undefined
        ? { ms: Number.POSITIVE_INFINITY, iteration: Math.floor(options.maxIterations * share) }
        : { ms: options.now() + (options.deadlineMs - options.now()) * share, iteration: Number.POSITIVE_INFINITY };
    // The fleet of the first plan only: a repair may not open a vehicle, routes may empty.
    for (let v = 0; v < inst.vehicles; v++) solution.allowed[v] = solution.routes[v]!.nodes.length > 0 ? 1 : 0;
    const priced = new Alns(inst, inserter, local, { ...weights, vehicle: lambda }, random, clock, inter);
    solution = priced.run(solution, { patience, endMs: end.ms, endIteration: end.iteration, report: true }).best;
    solution.allowed.fill(1);
    minimise(solution);
  }
  const alns = new Alns(inst, inserter, local, weights, random, clock, inter, deliveryUsed);
  // Large depot-load problems keep the last share of the time for the richer moves on the best plan found.
  const finish = deliveryUsed && LARGE.finish > 0 && (LARGE.cross || LARGE.intra);
  const { best, converged } = alns.run(solution, {
    patience,
    endMs:
      finish && options.maxIterations === undefined
        ? options.deadlineMs - (options.deadlineMs - options.now()) * LARGE.finish
        : Number.POSITIVE_INFINITY,
    endIteration: Number.POSITIVE_INFINITY,
    report: true,
  });
  if (finish && deliveryUsed && richKinds(deliveryUsed)) {
    const fromM = best.distance();
    best.dirty.fill(1);
    improveDirty(best, local, inter, deliveryUsed);
    best.dirty.fill(0);
    options.onFinish?.({ fromM, toM: best.distance() });
    report(clock, best);
  }
  return { best, iterations: clock.iterations, stopped: converged ? 'converged' : 'time_limit' };
}

/**
 * The k-th other first plan's insertion order and price on a vehicle opened: 1 farthest from the start first, 2 the
 * most urgent first with a round trip's price on each vehicle opened (fuller routes), 3 the earliest window first,
 * then random orders.
 */
function startVariant(
  inst: Instance,
  tasks: readonly number[],
  k: number,
  vehicleCost: number,
  random: Random,
): { order: number[]; vehicleCost: number } {
  const { close, open, dist, size, loc, vStart } = inst;
  const order = tasks.slice();
  const urgency = (a: number, b: number) =>
    close[2 * a + 1]! - close[2 * b + 1]! || close[2 * a]! - close[2 * b]! || a - b;
  const start = vStart[0]!;
  const far = (t: number) => (start < 0 ? 0 : dist[start * size + loc[2 * t + 1]!]!);
  if (k === 1) order.sort((a, b) => far(b) - far(a) || a - b);
  else if (k === 2) {
    order.sort(urgency);
    return { order, vehicleCost: Math.max(vehicleCost, roundTrip(inst)) };
  } else if (k === 3) order.sort((a, b) => open[2 * a + 1]! - open[2 * b + 1]! || urgency(a, b));
  else random.shuffle(order);
  return { order, vehicleCost };
}

/** The mean distance from a vehicle's start to a task's stops and on to its end: what opening a route costs. */
function roundTrip(inst: Instance): number {
  const { dist, size, loc } = inst;
  let total = 0;
  let count = 0;
  for (let t = 0; t < inst.tasks; t++) {
    if (inst.impossible[t] !== null) continue;
    let best = Number.POSITIVE_INFINITY;
    for (let v = 0; v < Math.min(inst.vehicles, 8); v++) {
      const s = inst.vStart[v]!;
      const e = inst.vEnd[v]!;
      const p = loc[2 * t]!;
      const d = loc[2 * t + 1]!;
      best = Math.min(best, dist[s * size + p]! + dist[p * size + d]! + (e < 0 ? 0 : dist[d * size + e]!));
    }
    total += best;
    count++;
  }
  return count > 0 ? total / count : 0;
}
