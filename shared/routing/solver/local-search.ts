/**
 * Intra-route local search, run on every route an ALNS iteration changed: 2-opt (reverse a segment that holds no task
 * whole, so every pickup stays before its drop-off) and or-opt (move a run of 1 to 3 stops elsewhere in the route).
 * Each move's distance change is computed in O(1) (prefix sums of the route's legs both ways); only an improving move
 * is checked for feasibility, by replaying the route's times and loads (O(length)); first improvement, until none.
 */
import { EPS, type Instance, legDistance, stopAt } from './instance.ts';
import type { Solution } from './solution.ts';

const OR_OPT_MAX = 3;

export class LocalSearch {
  private fwd = new Float64Array(0);
  private bwd = new Float64Array(0);
  private scratch: number[] = [];
  private readonly seenStamp: Int32Array;
  private stamp = 0;

  constructor(private readonly inst: Instance) {
    this.seenStamp = new Int32Array(2 * inst.tasks);
  }

  /** Improves route r in place; true when it changed. */
  improve(solution: Solution, r: number): boolean {
    const route = solution.routes[r]!;
    if (route.nodes.length < 3) return false;
    let changed = false;
    let guard = 0;
    while (guard++ < 1000 && (this.twoOpt(solution, r) || this.orOpt(solution, r))) changed = true;
    return changed;
  }

  private d(a: number, b: number): number {
    return legDistance(this.inst, a, b);
  }

  private prepare(nodes: readonly number[]): void {
    const L = nodes.length;
    if (this.fwd.length < L + 1) {
      this.fwd = new Float64Array(2 * L + 2);
      this.bwd = new Float64Array(2 * L + 2);
    }
    const { loc } = this.inst;
    this.fwd[0] = 0;
    this.bwd[0] = 0;
    for (let k = 1; k < L; k++) {
      const a = loc[nodes[k - 1]!]!;
      const b = loc[nodes[k]!]!;
      this.fwd[k] = this.fwd[k - 1]! + this.d(a, b);
      this.bwd[k] = this.bwd[k - 1]! + this.d(b, a);
    }
  }

  /** Distance of the order, or Infinity when it breaks precedence, a window, the shift or a capacity. */
  private replay(v: number, nodes: readonly number[]): number {
    const { inst } = this;
    const { dist, dur, size, loc, open, close, service, load, cap } = inst;
    const stamp = ++this.stamp;
    let prev = inst.vStart[v]!;
    let time = inst.shiftStart[v]!;
    let distance = 0;
    let w = 0;
    let vol = 0;
    let items = 0;
    for (const node of nodes) {
      if (node & 1) {
        if (this.seenStamp[node - 1] !== stamp) return Number.POSITIVE_INFINITY;
      } else this.seenStamp[node] = stamp;
      const l = loc[node]!;
      distance += dist[prev * size + l]!;
      time = Math.max(open[node]!, time + dur[prev * size + l]!);
      if (time > close[node]! + EPS) return Number.POSITIVE_INFINITY;
      time += service[node]!;
      const t3 = 3 * (node >> 1);
      const sign = node & 1 ? -1 : 1;
      w += sign * load[t3]!;
      vol += sign * load[t3 + 1]!;
      items += sign * load[t3 + 2]!;
      if (w > cap[3 * v]! + EPS || vol > cap[3 * v + 1]! + EPS || items > cap[3 * v + 2]! + EPS)
        return Number.POSITIVE_INFINITY;
      prev = l;
    }
    const end = inst.vEnd[v]!;
    if (end >= 0) {
      distance += dist[prev * size + end]!;
      time += dur[prev * size + end]!;
    }
    return time > inst.shiftEnd[v]! + EPS ? Number.POSITIVE_INFINITY : distance;
  }

  private apply(solution: Solution, r: number, order: number[]): void {
    const route = solution.routes[r]!;
    const nodes = route.nodes;
    nodes.length = order.length;
    for (let k = 0; k < order.length; k++) nodes[k] = order[k]!;
    solution.refresh(r);
  }

  private twoOpt(solution: Solution, r: number): boolean {
    const { inst } = this;
    const route = solution.routes[r]!;
    const { nodes } = route;
    const L = nodes.length;
    this.prepare(nodes);
    const { loc } = inst;
    const start = inst.vStart[r]!;
    const end = inst.vEnd[r]!;
    const pos = solution.pos;
    for (let a = 0; a < L - 1; a++) {
      const prev = a === 0 ? start : loc[nodes[a - 1]!]!;
      const la = loc[nodes[a]!]!;
      let whole = false;
      for (let b = a + 1; b < L; b++) {
        // A task with both stops in [a, b] would be reversed: drop-off before pickup.
        const nb = nodes[b]!;
        if (nb & 1 && pos[nb - 1]! >= a) whole = true;
        if (whole) break;
        const lb = loc[nb]!;
        const next = b === L - 1 ? end : loc[nodes[b + 1]!]!;
        const before = this.d(prev, la) + (this.fwd[b]! - this.fwd[a]!) + this.d(lb, next);
        const after = this.d(prev, lb) + (this.bwd[b]! - this.bwd[a]!) + this.d(la, next);
        if (after >= before - 1e-7) continue;
        const order = this.scratch;
        order.length = 0;
        for (let k = 0; k < a; k++) order.push(nodes[k]!);
        for (let k = b; k >= a; k--) order.push(nodes[k]!);
        for (let k = b + 1; k < L; k++) order.push(nodes[k]!);
        if (this.replay(r, order) < route.distance - 1e-7) {
          this.apply(solution, r, order);
          return true;
        }
      }
    }
    return false;
  }

  private orOpt(solution: Solution, r: number): boolean {
    const { inst } = this;
    const route = solution.routes[r]!;
    const { nodes } = route;
    const L = nodes.length;
    const { loc } = inst;
    const start = inst.vStart[r]!;
    const end = inst.vEnd[r]!;
    for (let len = 1; len <= OR_OPT_MAX; len++) {
      for (let a = 0; a + len <= L; a++) {
        const e = a + len - 1;
        const la = stopAt(loc, nodes, start, end, a);
        const le = stopAt(loc, nodes, start, end, e);
        const prev = stopAt(loc, nodes, start, end, a - 1);
        const next = stopAt(loc, nodes, start, end, e + 1);
        const gain = this.d(prev, la) + this.d(le, next) - this.d(prev, next);
        if (gain <= 1e-7) continue;
        // Before position j of the original order, j outside [a, e + 1].
        for (let j = 0; j <= L; j++) {
          if (j >= a && j <= e + 1) continue;
          const x = stopAt(loc, nodes, start, end, j - 1);
          const y = stopAt(loc, nodes, start, end, j);
          const added = this.d(x, la) + this.d(le, y) - this.d(x, y);
          if (added >= gain - 1e-7) continue;
          const order = this.scratch;
          order.length = 0;
          for (let k = 0; k <= L; k++) {
            if (k === j) for (let s = a; s <= e; s++) order.push(nodes[s]!);
            if (k < L && (k < a || k > e)) order.push(nodes[k]!);
          }
          if (this.replay(r, order) < route.distance - 1e-7) {
            this.apply(solution, r, order);
            return true;
          }
        }
      }
    }
    return false;
  }
}
