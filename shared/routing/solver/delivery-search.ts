/**
 * Inter-route local search for routes of depot loads (issue 53): a task whose pickup is at the vehicle's own start,
 * takes no time and may happen at the shift's first instant (a VRPTW customer, a parcel loaded at the depot) is, for
 * the moves, a delivery-only stop: its pickup sits in the run of pickups at the route's head, the vehicle leaves with
 * the route's whole load, and the route is its drop-offs alone. On such routes the standard VRPTW moves are O(1) each
 * (Savelsbergh's forward and backward slack, as VROOM and HGS keep them): per drop-off its earliest service start
 * given the drop-offs before it, the latest that keeps every later one and the shift's end, and prefix sums of load
 * and distance, so a move's feasibility and cost join two or three pieces of routes without re-timing either.
 *
 * Moves, each between two routes and only towards the granular neighbourhood (a task's nearest tasks, instance.ts):
 * relocate (u before or after a neighbour w), swap (u and w trade places), 2-opt* (the head of one route up to u
 * joined to the tail of the other from w, and the other way), and or-opt (a run of 2 or 3 drop-offs from u moved
 * before or after w); the richer kinds (VROOM's neighbourhood): cross-exchange (runs of 1 to 3 of two routes trade
 * places, either kept or reversed) and moves within a route (relocate or or-opt before or after a neighbour, exchange,
 * 2-opt reversal). First improvement, the moved routes' tasks queued again, until no move improves: a local optimum.
 * A route is never opened (the fleet does not grow); a route may empty. A route that holds any other kind of task (a
 * pickup elsewhere, an on-board load) is left to the other operators. Views, joins and writing back: delivery-view.ts.
 */
import { DeliveryRoutes, type View } from './delivery-view.ts';
import type { Instance } from './instance.ts';
import type { Solution } from './solution.ts';

/** How many of a task's nearest tasks its moves look at. */
export const DELIVERY_GRANULAR = 20;
const OR_MAX = 3;
/** A move must shorten the plan by more than this (metres) to count: no cycling on rounding. */
const GAIN = 1e-6;
/** Tasks tried between two reads of `stop`. */
const STOP_EVERY = 64;

/** The load through position k of a view in dimension d (0 before the first). */
function loadThrough(V: View, k: number, d: number): number {
  return k < 0 ? 0 : V.q[3 * k + d]!;
}

/** The load of a view's run of `len` from position k in dimension d. */
function runLoad(V: View, k: number, len: number, d: number): number {
  return loadThrough(V, k + len - 1, d) - loadThrough(V, k - 1, d);
}

/** Appends the run of `len` from position i of `x` to `seg`, reversed when `rev`. */
function pushRun(seg: number[], x: Int32Array, i: number, len: number, rev: boolean): void {
  for (let m = 0; m < len; m++) seg.push(x[rev ? i + len - 1 - m : i + m]!);
}

/** A view's run of `len` drop-offs from position k, reversed when `rev`. */
function runOf(V: View, k: number, len: number, rev: boolean): number[] {
  const out = Array.from(V.x.subarray(k, k + len));
  return rev ? out.reverse() : out;
}

export class DeliverySearch extends DeliveryRoutes {
  private readonly queued: Uint8Array;
  /** The tasks that have t among their granular neighbours: `watchers[watchersStart[t] .. watchersStart[t + 1])`. */
  private readonly watchers: Int32Array;
  private readonly watchersStart: Int32Array;
  /** Read every STOP_EVERY tasks: true stops the search (the search's clock). */
  stop: () => boolean = () => false;
  private sinceStop = 0;
  /** Moves applied, by kind (the benchmark's profile). */
  readonly applied = { relocate: 0, swap: 0, twoOptStar: 0, orOpt: 0, cross: 0, intra: 0 };
  /**
   * Which move kinds run (all by default; the benchmark's ablation and the tests switch them): `inter` relocate, swap,
   * 2-opt* and or-opt between routes; `cross` cross-exchange; `intra` moves within a route; `reverse` reversed runs.
   */
  readonly kinds = { inter: true, cross: true, intra: true, reverse: true };
  private seg: number[] = [];

  constructor(inst: Instance) {
    super(inst);
    const { tasks } = inst;
    this.queued = new Uint8Array(tasks);
    // Who looks at whom: a task whose route changed is a new chance for the tasks that list it as a neighbour.
    const K = Math.min(inst.k, DELIVERY_GRANULAR);
    const count = new Int32Array(tasks + 1);
    for (let u = 0; u < tasks; u++)
      for (let g = 0; g < K; g++) {
        const w = inst.neighbours[u * inst.k + g]!;
        if (w >= 0) count[w + 1]!++;
      }
    for (let t = 0; t < tasks; t++) count[t + 1]! += count[t]!;
    this.watchersStart = count;
    this.watchers = new Int32Array(count[tasks]!);
    const fill = count.slice(0, tasks);
    for (let u = 0; u < tasks; u++)
      for (let g = 0; g < K; g++) {
        const w = inst.neighbours[u * inst.k + g]!;
        if (w >= 0) this.watchers[fill[w]!++] = u;
      }
  }

  /** Distance saved by taking positions i..i+len-1 out of a route of vehicle v (the route's whole when it empties). */
  private removalGain(view: View, v: number, i: number, len: number): number {
    if (len >= view.n) return view.pre[view.n - 1]! + view.suf[view.n - 1]!;
    const a = this.locAt(view, i - 1, v);
    const b = this.locAt(view, i + len, v);
    const inner = view.pre[i + len - 1]! - view.pre[i]!;
    return (
      this.d(a, this.locAt(view, i, v)) +
      inner +
      this.d(this.locAt(view, i + len - 1, v), b) -
      (i === 0 && i + len >= view.n ? 0 : this.d(a, b))
    );
  }

  /**
   * Local search to a local optimum over the depot-load routes, starting from `tasks` (every task when omitted);
   * returns how many moves it applied. Routes it changes are refreshed (their `dirty` flag set).
   */
  improve(solution: Solution, tasks?: readonly number[]): number {
    const { inst } = this;
    this.stamp++;
    const queue: number[] = [];
    const list = tasks ?? Array.from({ length: inst.tasks }, (_, t) => t);
    for (const t of list) {
      if (solution.taskRoute[t]! < 0 || this.queued[t] === 1) continue;
      this.queued[t] = 1;
      queue.push(t);
    }
    let moves = 0;
    let head = 0;
    while (head < queue.length) {
      if (head > 4096 && head * 2 > queue.length) {
        queue.splice(0, head);
        head = 0;
      }
      const u = queue[head++]!;
      this.queued[u] = 0;
      // The clock is read every STOP_EVERY tasks (a CPU clock's read costs as much as a task's moves).
      if (++this.sinceStop >= STOP_EVERY) {
        this.sinceStop = 0;
        if (this.stop()) break;
      }
      const changed = this.tryTask(solution, u);
      if (changed === null) continue;
      moves++;
      // Every task of the two routes, and every task that looks at one of them, may have a move again.
      for (const r of changed)
        for (const node of solution.routes[r]!.nodes) {
          if ((node & 1) === 0) continue;
          const t = node >> 1;
          this.requeue(solution, queue, t);
          for (let k = this.watchersStart[t]!; k < this.watchersStart[t + 1]!; k++)
            this.requeue(solution, queue, this.watchers[k]!);
        }
      this.requeue(solution, queue, u);
    }
    for (let k = head; k < queue.length; k++) this.queued[queue[k]!] = 0;
    return moves;
  }

  /** Queues task t again unless it is queued already or left out. */
  private requeue(solution: Solution, queue: number[], t: number): void {
    if (this.queued[t] === 0 && solution.taskRoute[t]! >= 0) {
      this.queued[t] = 1;
      queue.push(t);
    }
  }

  /** The first improving move of task u towards its neighbours, applied; the routes it changed, or null. */
  private tryTask(solution: Solution, u: number): number[] | null {
    const { inst } = this;
    const a = solution.taskRoute[u]!;
    if (a < 0) return null;
    const A = this.view(solution, a);
    if (!A.ok) return null;
    const i = solution.pos[2 * u + 1]! - A.n;
    const K = Math.min(inst.k, DELIVERY_GRANULAR);
    for (let g = 0; g < K; g++) {
      const w = inst.neighbours[u * inst.k + g]!;
      if (w < 0) break;
      const b = solution.taskRoute[w]!;
      if (b < 0 || b === a || !this.kinds.inter) continue;
      const B = this.view(solution, b);
      if (!B.ok) continue;
      const j = solution.pos[2 * w + 1]! - B.n;
      if (
        this.relocate(solution, A, a, i, B, b, j) ||
        this.relocate(solution, A, a, i, B, b, j + 1) ||
        this.swap(solution, A, a, i, B, b, j) ||
        this.twoOptStar(solution, A, a, i, B, b, j) ||
        this.twoOptStar(solution, B, b, j, A, a, i) ||
        this.orOpt(solution, A, a, i, B, b, j) ||
        this.orOpt(solution, A, a, i, B, b, j + 1) ||
        (this.kinds.cross && this.crossAround(solution, A, a, i, B, b, j))
      )
        return [a, b];
    }
    if (!this.kinds.intra) return null;
    // Within u's own route: toward each neighbour the route holds.
    for (let g = 0; g < K; g++) {
      const w = inst.neighbours[u * inst.k + g]!;
      if (w < 0) break;
      if (w === u || solution.taskRoute[w] !== a) continue;
      const A2 = this.view(solution, a);
      const i2 = solution.pos[2 * u + 1]! - A2.n;
      const j = solution.pos[2 * w + 1]! - A2.n;
      if (this.intraAround(solution, A2, a, i2, j)) return [a];
    }
    return null;
  }

  /**
   * Cross-exchange (VROOM's cross and mixed exchange): a run of 1 to 3 drop-offs of A and a run of 1 to 3 of B trade
   * places, each kept or reversed; the runs start after u and at w (the new edge u → w), or at u and after w (w → u),
   * or at u and w when one of them heads its route (no predecessor gives that pair). The single swap is `swap`'s.
   */
  private crossAround(solution: Solution, A: View, a: number, i: number, B: View, b: number, j: number): boolean {
    for (let la = 1; la <= OR_MAX; la++)
      for (let lb = 1; lb <= OR_MAX; lb++)
        for (let orient = 0; orient < (this.kinds.reverse ? 4 : 1); orient++) {
          const ra = (orient & 1) === 1;
          const rb = (orient & 2) === 2;
          if ((ra && la === 1) || (rb && lb === 1)) continue;
          if (
            // At u and w both only at a route's head (elsewhere the two variants below cover it from the neighbours).
            (!(la === 1 && lb === 1) &&
              (i === 0 || j === 0) &&
              this.cross(solution, A, a, i, la, ra, B, b, j, lb, rb)) ||
            this.cross(solution, A, a, i + 1, la, ra, B, b, j, lb, rb) ||
            this.cross(solution, A, a, i, la, ra, B, b, j + 1, lb, rb)
          )
            return true;
        }
    return false;
  }

  /** A's run at s (length la, reversed when ra) and B's at t (lb, rb) trade places. */
  private cross(
    solution: Solution,
    A: View,
    a: number,
    s: number,
    la: number,
    ra: boolean,
    B: View,
    b: number,
    t: number,
    lb: number,
    rb: boolean,
  ): boolean {
    if (s + la > A.n || t + lb > B.n) return false;
    const { loc } = this.inst;
    const pa = this.locAt(A, s - 1, a);
    const na = this.locAt(A, s + la, a);
    const pb = this.locAt(B, t - 1, b);
    const nb = this.locAt(B, t + lb, b);
    const firstA = loc[A.x[ra ? s + la - 1 : s]!]!;
    const lastA = loc[A.x[ra ? s : s + la - 1]!]!;
    const firstB = loc[B.x[rb ? t + lb - 1 : t]!]!;
    const lastB = loc[B.x[rb ? t : t + lb - 1]!]!;
    const before =
      this.d(pa, loc[A.x[s]!]!) +
      this.runDist(A, s, la, false) +
      this.d(loc[A.x[s + la - 1]!]!, na) +
      this.d(pb, loc[B.x[t]!]!) +
      this.runDist(B, t, lb, false) +
      this.d(loc[B.x[t + lb - 1]!]!, nb);
    const after =
      this.d(pa, firstB) +
      this.runDist(B, t, lb, rb) +
      this.d(lastB, na) +
      this.d(pb, firstA) +
      this.runDist(A, s, la, ra) +
      this.d(lastA, nb);
    if (after - before >= -GAIN) return false;
    // Loads: each route's total less its run plus the other's.
    for (let k = s; k < s + la; k++) if (!this.eligible(A.x[k]! >> 1, b)) return false;
    for (let k = t; k < t + lb; k++) if (!this.eligible(B.x[k]! >> 1, a)) return false;
    if (!this.fitsTraded(A, a, s, la, B, t, lb) || !this.fitsTraded(B, b, t, lb, A, s, la)) return false;
    let dep = this.serveRun(B, t, lb, rb, pa, this.depAt(A, s - 1, a));
    if (dep < 0 || !this.reach(A, s + la, a, lastB, dep)) return false;
    dep = this.serveRun(A, s, la, ra, pb, this.depAt(B, t - 1, b));
    if (dep < 0 || !this.reach(B, t + lb, b, lastA, dep)) return false;
    const newA = [...A.x.subarray(0, s), ...runOf(B, t, lb, rb), ...A.x.subarray(s + la, A.n)];
    const newB = [...B.x.subarray(0, t), ...runOf(A, s, la, ra), ...B.x.subarray(t + lb, B.n)];
    if (!this.apply(solution, a, newA, b, newB)) return false;
    this.applied.cross++;
    return true;
  }

  /** Whether X (vehicle x) holds its load with its run of lx from k given for Y's run of ly from y. */
  private fitsTraded(X: View, x: number, k: number, lx: number, Y: View, y: number, ly: number): boolean {
    return this.fits(
      x,
      loadThrough(X, X.n - 1, 0) - runLoad(X, k, lx, 0) + runLoad(Y, y, ly, 0),
      loadThrough(X, X.n - 1, 1) - runLoad(X, k, lx, 1) + runLoad(Y, y, ly, 1),
      loadThrough(X, X.n - 1, 2) - runLoad(X, k, lx, 2) + runLoad(Y, y, ly, 2),
      X.n - lx + ly,
    );
  }

  /**
   * Moves within one route, between u (position i) and a neighbour w (position j) it holds: relocate u, or a run of
   * 2 or 3 from u (kept or reversed), before or after w; u and w trade places; 2-opt: the stretch between them
   * reversed (with either end or both).
   */
  private intraAround(solution: Solution, A: View, a: number, i: number, j: number): boolean {
    const { x } = A;
    const seg = this.seg;
    for (let len = 1; len <= OR_MAX && i + len <= A.n; len++)
      for (let rev = 0; rev < (len > 1 ? 2 : 1); rev++)
        for (let dest = j; dest <= j + 1; dest++) {
          if (dest >= i && dest <= i + len) continue;
          seg.length = 0;
          if (dest < i) {
            pushRun(seg, x, i, len, rev === 1);
            for (let k = dest; k < i; k++) seg.push(x[k]!);
            if (this.intra(solution, A, a, dest, i + len - 1, seg)) return true;
          } else {
            for (let k = i + len; k < dest; k++) seg.push(x[k]!);
            pushRun(seg, x, i, len, rev === 1);
            if (this.intra(solution, A, a, i, dest - 1, seg)) return true;
          }
        }
    const lo = Math.min(i, j);
    const hi = Math.max(i, j);
    seg.length = 0;
    seg.push(x[hi]!);
    for (let k = lo + 1; k < hi; k++) seg.push(x[k]!);
    seg.push(x[lo]!);
    if (this.intra(solution, A, a, lo, hi, seg)) return true;
    for (const [p, r] of [
      [lo + 1, hi],
      [lo, hi - 1],
      [lo, hi],
    ] as const) {
      if (r - p < 1) continue;
      seg.length = 0;
      for (let k = r; k >= p; k--) seg.push(x[k]!);
      if (this.intra(solution, A, a, p, r, seg)) return true;
    }
    return false;
  }

  /** Route a with positions lo..hi replaced by `seg` (the same drop-offs in another order), when it is shorter. */
  private intra(solution: Solution, A: View, a: number, lo: number, hi: number, seg: readonly number[]): boolean {
    const { loc } = this.inst;
    const prev = this.locAt(A, lo - 1, a);
    const next = this.locAt(A, hi + 1, a);
    const before = this.d(prev, loc[A.x[lo]!]!) + (A.pre[hi]! - A.pre[lo]!) + this.d(loc[A.x[hi]!]!, next);
    let after = 0;
    let from = prev;
    for (const node of seg) {
      after += this.d(from, loc[node]!);
      from = loc[node]!;
    }
    after += this.d(from, next);
    if (after - before >= -GAIN) return false;
    let dep = this.depAt(A, lo - 1, a);
    from = prev;
    for (const node of seg) {
      dep = this.serve(node, from, dep);
      if (dep < 0) return false;
      from = loc[node]!;
    }
    if (!this.reach(A, hi + 1, a, from, dep)) return false;
    const drops = Array.from(A.x.subarray(0, A.n));
    for (let k = lo; k <= hi; k++) drops[k] = seg[k - lo]!;
    if (!this.apply(solution, a, drops)) return false;
    this.applied.intra++;
    return true;
  }

  /** Relocate: the drop-off at A's position i goes before B's position j. */
  private relocate(solution: Solution, A: View, a: number, i: number, B: View, b: number, j: number): boolean {
    return this.moveRun(solution, A, a, i, 1, B, b, j, 'relocate');
  }

  /** Or-opt: the run of 2 or 3 drop-offs from A's position i goes before B's position j, as it is. */
  private orOpt(solution: Solution, A: View, a: number, i: number, B: View, b: number, j: number): boolean {
    for (let len = 2; len <= OR_MAX && i + len <= A.n; len++)
      if (this.moveRun(solution, A, a, i, len, B, b, j, 'orOpt')) return true;
    return false;
  }

  private moveRun(
    solution: Solution,
    A: View,
    a: number,
    i: number,
    len: number,
    B: View,
    b: number,
    j: number,
    kind: 'relocate' | 'orOpt',
  ): boolean {
    const { inst } = this;
    const { loc, load } = inst;
    const first = A.x[i]!;
    const last = A.x[i + len - 1]!;
    let w = 0;
    let vol = 0;
    let items = 0;
    for (let k = i; k < i + len; k++) {
      const t = A.x[k]! >> 1;
      if (!this.eligible(t, b)) return false;
      w += load[3 * t]!;
      vol += load[3 * t + 1]!;
      items += load[3 * t + 2]!;
    }
    const qb = 3 * (B.n - 1);
    if (!this.fits(b, B.q[qb]! + w, B.q[qb + 1]! + vol, B.q[qb + 2]! + items, B.n + len)) return false;
    const pb = this.locAt(B, j - 1, b);
    const nb = this.locAt(B, j, b);
    const inner = A.pre[i + len - 1]! - A.pre[i]!;
    const added = this.d(pb, loc[first]!) + inner + this.d(loc[last]!, nb) - this.d(pb, nb);
    const gain = this.removalGain(A, a, i, len);
    if (added - gain >= -GAIN) return false;
    // Times: the run in B, then B's rest; A without the run.
    let from = pb;
    let dep = this.depAt(B, j - 1, b);
    for (let k = i; k < i + len; k++) {
      dep = this.serve(A.x[k]!, from, dep);
      if (dep < 0) return false;
      from = loc[A.x[k]!]!;
    }
    if (!this.reach(B, j, b, from, dep)) return false;
    if (len < A.n && !this.reach(A, i + len, a, this.locAt(A, i - 1, a), this.depAt(A, i - 1, a))) return false;
    const newA: number[] = [];
    for (let k = 0; k < A.n; k++) if (k < i || k >= i + len) newA.push(A.x[k]!);
    const newB: number[] = [];
    for (let k = 0; k < B.n; k++) {
      if (k === j) for (let m = i; m < i + len; m++) newB.push(A.x[m]!);
      newB.push(B.x[k]!);
    }
    if (j === B.n) for (let m = i; m < i + len; m++) newB.push(A.x[m]!);
    if (!this.apply(solution, a, newA, b, newB)) return false;
    this.applied[kind]++;
    return true;
  }

  /** Swap: A's drop-off at i and B's at j trade places. */
  private swap(solution: Solution, A: View, a: number, i: number, B: View, b: number, j: number): boolean {
    const { inst } = this;
    const { loc, load } = inst;
    const nu = A.x[i]!;
    const nw = B.x[j]!;
    const tu = nu >> 1;
    const tw = nw >> 1;
    if (!this.eligible(tu, b) || !this.eligible(tw, a)) return false;
    const qa = 3 * (A.n - 1);
    const qb = 3 * (B.n - 1);
    const dw = load[3 * tw]! - load[3 * tu]!;
    const dv = load[3 * tw + 1]! - load[3 * tu + 1]!;
    const di = load[3 * tw + 2]! - load[3 * tu + 2]!;
    if (!this.fits(a, A.q[qa]! + dw, A.q[qa + 1]! + dv, A.q[qa + 2]! + di, A.n)) return false;
    if (!this.fits(b, B.q[qb]! - dw, B.q[qb + 1]! - dv, B.q[qb + 2]! - di, B.n)) return false;
    const pa = this.locAt(A, i - 1, a);
    const na = this.locAt(A, i + 1, a);
    const pb = this.locAt(B, j - 1, b);
    const nb = this.locAt(B, j + 1, b);
    const lu = loc[nu]!;
    const lw = loc[nw]!;
    const delta =
      this.d(pa, lw) +
      this.d(lw, na) -
      this.d(pa, lu) -
      this.d(lu, na) +
      this.d(pb, lu) +
      this.d(lu, nb) -
      this.d(pb, lw) -
      this.d(lw, nb);
    if (delta >= -GAIN) return false;
    const depA = this.serve(nw, pa, this.depAt(A, i - 1, a));
    if (depA < 0 || !this.reach(A, i + 1, a, lw, depA)) return false;
    const depB = this.serve(nu, pb, this.depAt(B, j - 1, b));
    if (depB < 0 || !this.reach(B, j + 1, b, lu, depB)) return false;
    const newA = Array.from(A.x.subarray(0, A.n));
    const newB = Array.from(B.x.subarray(0, B.n));
    newA[i] = nw;
    newB[j] = nu;
    if (!this.apply(solution, a, newA, b, newB)) return false;
    this.applied.swap++;
    return true;
  }

  /**
   * 2-opt*: A's head through position i joined to B's tail from position j (the new edge u → w), and B's head before
   * j to A's tail after i. Between vehicles of one class only (same start, end, shift and capacity).
   */
  private twoOptStar(solution: Solution, A: View, a: number, i: number, B: View, b: number, j: number): boolean {
    const { inst } = this;
    if (inst.vClass[a] !== inst.vClass[b]) return false;
    const q = loadThrough;
    const lenA = i + 1 + (B.n - j);
    const lenB = j + (A.n - i - 1);
    if (
      !this.fits(
        a,
        q(A, i, 0) + q(B, B.n - 1, 0) - q(B, j - 1, 0),
        q(A, i, 1) + q(B, B.n - 1, 1) - q(B, j - 1, 1),
        q(A, i, 2) + q(B, B.n - 1, 2) - q(B, j - 1, 2),
        lenA,
      ) ||
      !this.fits(
        b,
        q(B, j - 1, 0) + q(A, A.n - 1, 0) - q(A, i, 0),
        q(B, j - 1, 1) + q(A, A.n - 1, 1) - q(A, i, 1),
        q(B, j - 1, 2) + q(A, A.n - 1, 2) - q(A, i, 2),
        lenB,
      )
    )
      return false;
    const before = A.pre[A.n - 1]! + A.suf[A.n - 1]! + B.pre[B.n - 1]! + B.suf[B.n - 1]!;
    const after = this.joined(A, i, B, j, a) + this.joined(B, j - 1, A, i + 1, a);
    if (after - before >= -GAIN) return false;
    if (!this.reach(B, j, a, this.locAt(A, i, a), this.depAt(A, i, a))) return false;
    if (!this.reach(A, i + 1, b, this.locAt(B, j - 1, b), this.depAt(B, j - 1, b))) return false;
    const newA = [...A.x.subarray(0, i + 1), ...B.x.subarray(j, B.n)];
    const newB = [...B.x.subarray(0, j), ...A.x.subarray(i + 1, A.n)];
    if (!this.apply(solution, a, newA, b, newB)) return false;
    this.applied.twoOptStar++;
    return true;
  }

  /** A new route of vehicle v's class: X's head (positions 0..h) joined to Y's tail (positions s..); its distance. */
  private joined(X: View, h: number, Y: View, s: number, v: number): number {
    if (h < 0 && s >= Y.n) return 0;
    return (h < 0 ? 0 : X.pre[h]!) + this.d(this.locAt(X, h, v), this.locAt(Y, s, v)) + (s >= Y.n ? 0 : Y.suf[s]!);
  }
}
