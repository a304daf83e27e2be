/**
 * A working solution: one route per vehicle (most empty), where each task is (route, pickup and drop-off positions),
 * and which vehicles the search may use (all of them, or fewer while the vehicle-reduction phase tries to do without
 * one). Its cost orders solutions the way the objective does: unplanned tasks first, then vehicles used (objective
 * `vehicles`), then distance, folded into one number with weights far apart.
 */
import type { Instance } from './instance.ts';
import { Route } from './route.ts';

export class Solution {
  readonly routes: Route[];
  /** Route (vehicle) of each task, -1 when unplanned. */
  readonly taskRoute: Int32Array;
  /** Position of each node in its route. */
  readonly pos: Int32Array;
  readonly allowed: Uint8Array;
  /** Routes refreshed since the flags were last cleared (what an iteration changed). */
  readonly dirty: Uint8Array;
  constructor(
    readonly inst: Instance,
    allowed?: Uint8Array,
  ) {
    this.routes = Array.from({ length: inst.vehicles }, (_, v) => new Route(v));
    this.taskRoute = new Int32Array(inst.tasks).fill(-1);
    this.pos = new Int32Array(2 * inst.tasks).fill(-1);
    this.allowed = allowed ?? new Uint8Array(inst.vehicles).fill(1);
    this.dirty = new Uint8Array(inst.vehicles);
  }

  /** Recomputes route r's caches and its tasks' positions; false when the route is infeasible. */
  refresh(r: number): boolean {
    const route = this.routes[r]!;
    const ok = route.update(this.inst);
    this.dirty[r] = 1;
    const { nodes } = route;
    for (let k = 0; k < nodes.length; k++) {
      const node = nodes[k]!;
      this.pos[node] = k;
      if ((node & 1) === 0) this.taskRoute[node >> 1] = r;
    }
    return ok;
  }

  distance(): number {
    let total = 0;
    for (const route of this.routes) if (route.nodes.length > 0) total += route.distance;
    return total;
  }

  used(): number {
    let count = 0;
    for (const route of this.routes) if (route.nodes.length > 0) count++;
    return count;
  }

  /** Plannable tasks left out. */
  unplanned(): number {
    let count = 0;
    for (let t = 0; t < this.inst.tasks; t++) if (this.taskRoute[t]! < 0 && this.inst.impossible[t] === null) count++;
    return count;
  }

  /**
   * The plannable tasks left out, as the cost counts them: one each, but a kept task (`Instance.kept`: on board, or a
   * live runsheet's own) as many as all the tasks and one more, so no number of new tasks planned pays for one.
   */
  leftOutWeight(): number {
    const { tasks, impossible, kept } = this.inst;
    let weight = 0;
    for (let t = 0; t < tasks; t++)
      if (this.taskRoute[t]! < 0 && impossible[t] === null) weight += kept[t] ? tasks + 1 : 1;
    return weight;
  }

  /** The tasks planned, in no particular order. */
  planned(): number[] {
    const out: number[] = [];
    for (let t = 0; t < this.inst.tasks; t++) if (this.taskRoute[t]! >= 0) out.push(t);
    return out;
  }

  copyFrom(other: Solution): void {
    for (let r = 0; r < this.routes.length; r++) {
      const mine = this.routes[r]!;
      const theirs = other.routes[r]!;
      if (mine.nodes.length === theirs.nodes.length && mine.nodes.every((n, i) => n === theirs.nodes[i])) continue;
      const a = mine.nodes;
      const b = theirs.nodes;
      a.length = b.length;
      for (let k = 0; k < b.length; k++) a[k] = b[k]!;
      mine.update(this.inst);
    }
    this.taskRoute.set(other.taskRoute);
    this.pos.set(other.pos);
    this.allowed.set(other.allowed);
  }

  clone(): Solution {
    const copy = new Solution(this.inst, this.allowed.slice());
    copy.copyFrom(this);
    return copy;
  }
}

/** The weights that fold (unplanned, vehicles, distance) into one cost. */
export interface CostWeights {
  /** Added per vehicle used (0 for objective `distance`). */
  readonly vehicle: number;
  /** Added per plannable task left out (per task and one more for a kept one: `Solution.leftOutWeight`). */
  readonly unplanned: number;
}

export function costWeights(inst: Instance, objective: 'distance' | 'vehicles'): CostWeights {
  // Any distance difference is below `span`: a route visits at most 2n stops plus its ends.
  const span = (inst.maxEdge + 1) * (2 * inst.tasks + 2 * inst.vehicles + 2);
  const vehicle = objective === 'vehicles' ? span : 0;
  return { vehicle, unplanned: span * (inst.vehicles + 2) };
}

export function costOf(solution: Solution, weights: CostWeights): number {
  return (
    solution.distance() +
    (weights.vehicle > 0 ? weights.vehicle * solution.used() : 0) +
    weights.unplanned * solution.leftOutWeight()
  );
}
