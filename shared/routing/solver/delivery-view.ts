/**
 * Routes of depot loads seen as their drop-offs (issue 53), the ground delivery-search.ts's moves stand on: which
 * tasks are depot loads for which vehicles, each route's view (per drop-off its earliest and latest service start,
 * loads and distances through it, Savelsbergh's forward and backward slack as VROOM and HGS keep them), the O(1)
 * joins a move's feasibility is checked with, and writing two routes back.
 */
import { EPS, type Instance, legDistance } from './instance.ts';
import type { Solution } from './solution.ts';

/** A depot-load route seen as its drop-offs: times, loads and distances by position. */
export interface View {
  stamp: number;
  /** False: the route holds a task that is not a depot load for its vehicle (or its pickups are not all at its head). */
  ok: boolean;
  n: number;
  /** Drop-off nodes in order. */
  x: Int32Array;
  /** Earliest service start, latest service start, per position. */
  e: Float64Array;
  l: Float64Array;
  /** Load through position k, `q[3 k + d]`. */
  q: Float64Array;
  /** Distance from the start through position k (`pre[k]`), and from position k to the end (`suf[k]`). */
  pre: Float64Array;
  suf: Float64Array;
}

function emptyView(): View {
  return {
    stamp: -1,
    ok: false,
    n: 0,
    x: new Int32Array(8),
    e: new Float64Array(8),
    l: new Float64Array(8),
    q: new Float64Array(24),
    pre: new Float64Array(8),
    suf: new Float64Array(8),
  };
}

export class DeliveryRoutes {
  /** `front[t * classes + c]`: task t is a depot load for vehicles of class c (and one of them can serve it). */
  readonly front: Uint8Array;
  protected readonly views: View[];
  protected stamp = 0;

  constructor(protected readonly inst: Instance) {
    const { tasks, classes, vehicles, loc, open, close, service, vClass, vStart, shiftStart, impossible } = inst;
    this.front = new Uint8Array(tasks * classes);
    const rep = new Int32Array(classes).fill(-1);
    for (let v = 0; v < vehicles; v++) if (rep[vClass[v]!]! < 0) rep[vClass[v]!] = v;
    for (let t = 0; t < tasks; t++) {
      if (impossible[t] !== null) continue;
      const p = 2 * t;
      for (let c = 0; c < classes; c++) {
        const v = rep[c]!;
        if (v < 0) continue;
        const s = shiftStart[v]!;
        if (loc[p] === vStart[v] && service[p] === 0 && open[p]! <= s + EPS && s <= close[p]! + EPS)
          this.front[t * classes + c] = 1;
      }
    }
    this.views = Array.from({ length: vehicles }, emptyView);
  }

  /** Whether most plannable tasks are depot loads for some vehicle (the search, and polishing with it, pay). */
  applies(): boolean {
    const { tasks, classes, impossible } = this.inst;
    let plannable = 0;
    let loads = 0;
    for (let t = 0; t < tasks; t++) {
      if (impossible[t] !== null) continue;
      plannable++;
      for (let c = 0; c < classes; c++)
        if (this.front[t * classes + c] === 1) {
          loads++;
          break;
        }
    }
    return plannable > 0 && 2 * loads >= plannable;
  }

  protected eligible(t: number, v: number): boolean {
    const { inst } = this;
    return this.front[t * inst.classes + inst.vClass[v]!] === 1 && inst.canServe[t * inst.vehicles + v] === 1;
  }

  protected d(a: number, b: number): number {
    return legDistance(this.inst, a, b);
  }

  protected t(a: number, b: number): number {
    return a < 0 || b < 0 ? 0 : this.inst.dur[a * this.inst.size + b]!;
  }

  /** Route r's view, rebuilt when stale. */
  protected view(solution: Solution, r: number): View {
    const view = this.views[r]!;
    if (view.stamp === this.stamp) return view;
    view.stamp = this.stamp;
    const nodes = solution.routes[r]!.nodes;
    const L = nodes.length;
    const n = L >> 1;
    view.ok = false;
    view.n = n;
    if (L === 0 || (L & 1) === 1) return view;
    for (let k = 0; k < n; k++) if ((nodes[k]! & 1) === 1 || !this.eligible(nodes[k]! >> 1, r)) return view;
    if (view.x.length < n) {
      const c = 2 * n;
      view.x = new Int32Array(c);
      view.e = new Float64Array(c);
      view.l = new Float64Array(c);
      view.q = new Float64Array(3 * c);
      view.pre = new Float64Array(c);
      view.suf = new Float64Array(c);
    }
    for (let k = 0; k < n; k++) {
      const node = nodes[n + k]!;
      if ((node & 1) === 0) return view;
      view.x[k] = node;
    }
    this.retime(view, r);
    view.ok = true;
    return view;
  }

  /** Fills e, l, q, pre and suf of a view from its drop-offs, for vehicle v. */
  protected retime(view: View, v: number): void {
    const { inst } = this;
    const { loc, open, close, service, load } = inst;
    const { n, x, e, l, q, pre, suf } = view;
    let prev = inst.vStart[v]!;
    let time = inst.shiftStart[v]!;
    let dist = 0;
    let w = 0;
    let vol = 0;
    let it = 0;
    for (let k = 0; k < n; k++) {
      const node = x[k]!;
      const lk = loc[node]!;
      dist += this.d(prev, lk);
      time = Math.max(open[node]!, time + this.t(prev, lk));
      e[k] = time;
      time += service[node]!;
      pre[k] = dist;
      const t3 = 3 * (node >> 1);
      w += load[t3]!;
      vol += load[t3 + 1]!;
      it += load[t3 + 2]!;
      q[3 * k] = w;
      q[3 * k + 1] = vol;
      q[3 * k + 2] = it;
      prev = lk;
    }
    const end = inst.vEnd[v]!;
    let latest = inst.shiftEnd[v]!;
    let next = end;
    let back = 0;
    for (let k = n - 1; k >= 0; k--) {
      const node = x[k]!;
      const lk = loc[node]!;
      back += this.d(lk, next);
      suf[k] = back;
      latest = Math.min(close[node]!, latest - this.t(lk, next) - service[node]!);
      l[k] = latest;
      next = lk;
    }
  }

  protected locAt(view: View, k: number, v: number): number {
    if (k < 0) return this.inst.vStart[v]!;
    if (k >= view.n) return this.inst.vEnd[v]!;
    return this.inst.loc[view.x[k]!]!;
  }

  /** When the vehicle leaves position k (its start at the shift's start for k = -1). */
  protected depAt(view: View, k: number, v: number): number {
    return k < 0 ? this.inst.shiftStart[v]! : view.e[k]! + this.inst.service[view.x[k]!]!;
  }

  /** Leaving `from` at `dep`, can route v go on with positions k.. of its view and reach its end in time? */
  protected reach(view: View, k: number, v: number, from: number, dep: number): boolean {
    if (k >= view.n) return dep + this.t(from, this.inst.vEnd[v]!) <= this.inst.shiftEnd[v]! + EPS;
    const node = view.x[k]!;
    return Math.max(this.inst.open[node]!, dep + this.t(from, this.inst.loc[node]!)) <= view.l[k]! + EPS;
  }

  /** Serving node after leaving `from` at `dep`: its departure, or -1 when its window is missed. */
  protected serve(node: number, from: number, dep: number): number {
    const { inst } = this;
    const start = Math.max(inst.open[node]!, dep + this.t(from, inst.loc[node]!));
    return start > inst.close[node]! + EPS ? -1 : start + inst.service[node]!;
  }

  protected fits(v: number, w: number, vol: number, items: number, drops: number): boolean {
    const { cap, maxStops } = this.inst;
    return (
      w <= cap[3 * v]! + EPS &&
      vol <= cap[3 * v + 1]! + EPS &&
      items <= cap[3 * v + 2]! + EPS &&
      2 * drops <= maxStops[v]!
    );
  }

  /** Distance along positions k..k+len-1 of a view, in order or reversed. */
  protected runDist(V: View, k: number, len: number, rev: boolean): number {
    if (!rev) return V.pre[k + len - 1]! - V.pre[k]!;
    const { loc } = this.inst;
    let total = 0;
    for (let m = k + len - 1; m > k; m--) total += this.d(loc[V.x[m]!]!, loc[V.x[m - 1]!]!);
    return total;
  }

  /** Serves positions k..k+len-1 of V (reversed or not) after leaving `from` at `dep`: the departure, or -1. */
  protected serveRun(V: View, k: number, len: number, rev: boolean, from: number, dep: number): number {
    const { loc } = this.inst;
    for (let m = 0; m < len; m++) {
      const node = V.x[rev ? k + len - 1 - m : k + m]!;
      dep = this.serve(node, from, dep);
      if (dep < 0) return -1;
      from = loc[node]!;
    }
    return dep;
  }

  /**
   * Writes two routes back as depot loads (each drop-off's pickup in the run at the head, in the drop-offs' order)
   * and refreshes them; if either is not feasible as the solver replays it (never, unless a check above is wrong),
   * both are put back as they were and the move is refused.
   */
  protected apply(solution: Solution, a: number, dropsA: number[], b = -1, dropsB: number[] = []): boolean {
    const ra = solution.routes[a]!;
    const oldA = ra.nodes;
    ra.nodes = [...dropsA.map((x) => x - 1), ...dropsA];
    let ok = solution.refresh(a);
    this.views[a]!.stamp = -1;
    if (b < 0) {
      if (!ok) {
        ra.nodes = oldA;
        solution.refresh(a);
      }
      return ok;
    }
    const rb = solution.routes[b]!;
    const oldB = rb.nodes;
    rb.nodes = [...dropsB.map((x) => x - 1), ...dropsB];
    ok = solution.refresh(b) && ok;
    if (!ok) {
      ra.nodes = oldA;
      rb.nodes = oldB;
      solution.refresh(a);
      solution.refresh(b);
    }
    // The views of both routes are stale now.
    this.views[b]!.stamp = -1;
    return ok;
  }
}
