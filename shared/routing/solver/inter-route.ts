/**
 * Inter-route local search on granular neighbourhoods (Toth & Vigo 2003; as VROOM and HGS keep moves cheap at a
 * thousand customers): a task is only ever tried in the routes of its nearest tasks (the instance's time-window-aware
 * candidate list, its first `GRANULAR`), never in every route. Moves, each on the two routes it touches only:
 * - relocate: take task t out of its route and put it at its cheapest feasible place in a nearby route;
 * - exchange: swap task t with a nearby task u of another route, each at its cheapest place in the other's route;
 * - empty a route (route minimisation): relocate every task of one route into nearby routes, kept when the distance
 *   grows by less than a vehicle is worth (`vehicleValue`), else undone.
 * Insertion positions come from `bestInsertion` (every window, load, shift and stop bound checked in O(1) per position
 * with the route's forward/backward slack); a shortened route is re-timed (a matrix without the triangle inequality
 * can make a shortcut later), and a move that would break it is not made.
 */
import type { Instance } from './instance.ts';
import { removalGain } from './removal.ts';
import { bestInsertion, type Insertion, insertAt, Route } from './route.ts';
import type { Solution } from './solution.ts';

/** How many of a task's nearest tasks name the routes it is tried in. */
export const GRANULAR = 24;
/** A move must save more than this (metres) to count: no cycling on floating-point noise. */
const GAIN = 1e-6;

export class InterRoute {
  private readonly ins: Insertion = { cost: 0, i: -1, j: -1 };
  private readonly ins2: Insertion = { cost: 0, i: -1, j: -1 };
  /** Scratch copies of routes, one per vehicle, made on first use. */
  private readonly scratchA: (Route | undefined)[];
  private readonly scratchB: (Route | undefined)[];
  private readonly stamp: Int32Array;
  private token = 0;
  private readonly granular: number;
  /** Checked before each task (improve) and each route (minimiseRoutes): true stops the pass (the search's clock). */
  stop: () => boolean = () => false;

  constructor(
    private readonly inst: Instance,
    granular = GRANULAR,
  ) {
    this.scratchA = new Array(inst.vehicles);
    this.scratchB = new Array(inst.vehicles);
    this.stamp = new Int32Array(inst.vehicles);
    this.granular = Math.min(granular, inst.k);
  }

  /** The other routes task t is tried in: those of its nearest planned tasks, allowed, not its own, each once. */
  private candidateRoutes(solution: Solution, t: number, own: number, out: number[]): number[] {
    const { inst } = this;
    out.length = 0;
    const token = ++this.token;
    for (let h = 0; h < this.granular; h++) {
      const u = inst.neighbours[t * inst.k + h]!;
      if (u < 0) break;
      const r = solution.taskRoute[u]!;
      if (r < 0 || r === own || this.stamp[r] === token || solution.allowed[r] !== 1) continue;
      this.stamp[r] = token;
      out.push(r);
    }
    return out;
  }

  private readonly routesBuf: number[] = [];

  /** Moves task t to a nearby route where it costs less than it saves where it is; true when it moved. */
  relocate(solution: Solution, t: number): boolean {
    const a = solution.taskRoute[t]!;
    if (a < 0) return false;
    const gain = removalGain(solution, t);
    let best = gain - GAIN;
    let br = -1;
    let bi = -1;
    let bj = -1;
    for (const r of this.candidateRoutes(solution, t, a, this.routesBuf)) {
      const ins = bestInsertion(this.inst, solution.routes[r]!, t, 0, this.ins);
      if (ins.cost < best) {
        best = ins.cost;
        br = r;
        bi = ins.i;
        bj = ins.j;
      }
    }
    if (br < 0) return false;
    return this.move(solution, t, a, br, bi, bj);
  }

  /** Takes t out of route a and puts it before (i, j) of route b; undone (false) when route a breaks without it. */
  private move(solution: Solution, t: number, a: number, b: number, i: number, j: number): boolean {
    const from = solution.routes[a]!;
    const saved = from.nodes.slice();
    const p = 2 * t;
    from.nodes = from.nodes.filter((node) => node !== p && node !== p + 1);
    if (!solution.refresh(a)) {
      from.nodes = saved;
      solution.refresh(a);
      return false;
    }
    insertAt(solution.routes[b]!, t, i, j);
    solution.refresh(b);
    return true;
  }

  /** Route r without task t, in the scratch slot given; null when the shortened route breaks a constraint. */
  private without(solution: Solution, r: number, t: number, slots: (Route | undefined)[]): Route | null {
    let route = slots[r];
    if (!route) {
      route = new Route(r);
      slots[r] = route;
    }
    const p = 2 * t;
    const nodes = solution.routes[r]!.nodes;
    route.nodes.length = 0;
    for (const node of nodes) if (node !== p && node !== p + 1) route.nodes.push(node);
    return route.update(this.inst) ? route : null;
  }

  /**
   * Swaps task t with the nearby task of another route for which the two routes together shorten most (each task at
   * its cheapest feasible place in the other's route without it); true when it swapped.
   */
  exchange(solution: Solution, t: number): boolean {
    const { inst } = this;
    const a = solution.taskRoute[t]!;
    if (a < 0) return false;
    const routeA = solution.routes[a]!;
    const aWithout = this.without(solution, a, t, this.scratchA);
    if (!aWithout) return false;
    let best = -GAIN;
    let bu = -1;
    let bai = -1;
    let baj = -1;
    let bbi = -1;
    let bbj = -1;
    for (let h = 0; h < this.granular; h++) {
      const u = inst.neighbours[t * inst.k + h]!;
      if (u < 0) break;
      const b = solution.taskRoute[u]!;
      if (b < 0 || b === a || solution.allowed[b] !== 1) continue;
      const routeB = solution.routes[b]!;
      // u into route a without t first: most pairs fail or cost too much there, before route b is copied.
      const intoA = bestInsertion(inst, aWithout, u, 0, this.ins);
      if (intoA.cost === Number.POSITIVE_INFINITY) continue;
      const baseA = aWithout.distance + intoA.cost - routeA.distance;
      if (baseA - removalGain(solution, u) >= best) continue;
      const bWithout = this.without(solution, b, u, this.scratchB);
      if (!bWithout) continue;
      const intoB = bestInsertion(inst, bWithout, t, 0, this.ins2);
      if (intoB.cost === Number.POSITIVE_INFINITY) continue;
      const delta = baseA + bWithout.distance + intoB.cost - routeB.distance;
      if (delta < best) {
        best = delta;
        bu = u;
        bai = intoA.i;
        baj = intoA.j;
        bbi = intoB.i;
        bbj = intoB.j;
      }
    }
    if (bu < 0) return false;
    const b = solution.taskRoute[bu]!;
    const routeB = solution.routes[b]!;
    const bNodes = this.without(solution, b, bu, this.scratchB)!.nodes.slice();
    routeA.nodes = aWithout.nodes.slice();
    insertAt(routeA, bu, bai, baj);
    routeB.nodes = bNodes;
    insertAt(routeB, t, bbi, bbj);
    solution.refresh(a);
    solution.refresh(b);
    return true;
  }

  /**
   * Relocate, then exchange, for each task of `tasks` in turn, over and over until a pass moves nothing (at most
   * `passes`); returns the moves made. A task moved is tried again in the next pass with the tasks near it.
   */
  improve(solution: Solution, tasks: readonly number[], passes = 4, exchange = true): number {
    let moves = 0;
    let queue = tasks.slice();
    const { inst } = this;
    const queued = new Uint8Array(inst.tasks);
    for (let pass = 0; pass < passes && queue.length > 0; pass++) {
      const next: number[] = [];
      queued.fill(0);
      for (const t of queue) {
        if (this.stop()) return moves;
        if (solution.taskRoute[t]! < 0) continue;
        if (this.relocate(solution, t) || (exchange && this.exchange(solution, t))) {
          moves++;
          for (const x of [t, ...inst.reverseNeighbours[t]!.slice(0, this.granular)])
            if (queued[x] === 0) {
              queued[x] = 1;
              next.push(x);
            }
        }
      }
      queue = next;
    }
    return moves;
  }

  /**
   * Route minimisation: tries to empty route r by relocating each of its tasks, cheapest first, into nearby routes
   * (all allowed used routes when none is near). Kept when every task found room and the distance grew by less than
   * `vehicleValue`; else every route touched is put back as it was. True when the route is gone.
   */
  emptyRoute(solution: Solution, r: number, vehicleValue: number): boolean {
    const { inst } = this;
    const route = solution.routes[r]!;
    if (route.nodes.length === 0) return false;
    const before = solution.distance();
    const saved = new Map<number, number[]>([[r, route.nodes.slice()]]);
    const tasks = route.nodes.filter((n) => (n & 1) === 0).map((n) => n >> 1);
    const allowedBefore = solution.allowed[r]!;
    solution.allowed[r] = 0;
    let ok = true;
    for (const t of tasks) {
      let best = Number.POSITIVE_INFINITY;
      let br = -1;
      let bi = -1;
      let bj = -1;
      let cands = this.candidateRoutes(solution, t, r, this.routesBuf);
      if (cands.length === 0) {
        cands = [];
        for (let v = 0; v < inst.vehicles; v++)
          if (v !== r && solution.allowed[v] === 1 && solution.routes[v]!.nodes.length > 0) cands.push(v);
      }
      for (const c of cands) {
        const ins = bestInsertion(inst, solution.routes[c]!, t, 0, this.ins);
        if (ins.cost < best) {
          best = ins.cost;
          br = c;
          bi = ins.i;
          bj = ins.j;
        }
      }
      if (br < 0) {
        ok = false;
        break;
      }
      if (!saved.has(br)) saved.set(br, solution.routes[br]!.nodes.slice());
      if (!this.move(solution, t, r, br, bi, bj)) {
        ok = false;
        break;
      }
    }
    solution.allowed[r] = allowedBefore;
    if (ok && solution.distance() - before < vehicleValue) return true;
    for (const [v, nodes] of saved) {
      solution.routes[v]!.nodes = nodes;
      solution.refresh(v);
    }
    return false;
  }

  /**
   * Empties routes, the fewest tasks first, while it pays (see `emptyRoute`); each route tried once, at most `tries`
   * of them; returns how many went.
   */
  minimiseRoutes(solution: Solution, vehicleValue: number, tries: number): number {
    const used = solution.routes.filter((x) => x.nodes.length > 0);
    used.sort((x, y) => x.nodes.length - y.nodes.length || x.vehicle - y.vehicle);
    let gone = 0;
    for (const route of used.slice(0, tries)) {
      if (route.nodes.length === 0) continue;
      if (this.stop()) break;
      if (this.emptyRoute(solution, route.vehicle, vehicleValue)) gone++;
    }
    return gone;
  }
}
