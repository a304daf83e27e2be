/**
 * Greedy and regret-k insertion (Ropke & Pisinger 2006), the construction and the ALNS repair alike. Each pending
 * task keeps its cheapest insertion into each candidate route (all used routes on small problems, the routes of its
 * nearest tasks on large ones, plus one empty vehicle of each class) and its three cheapest routes; after an insertion
 * only the changed route's column is recomputed, for the tasks that had it as a candidate or are near the task put in.
 * Regret-k takes next the task with the fewest feasible routes (below k), then the largest regret, then the cheapest.
 */
import type { Instance } from './instance.ts';
import type { Random } from './random.ts';
import { bestInsertion, type Insertion, insertAt } from './route.ts';
import type { Solution } from './solution.ts';

/** Up to this many tasks, every used route is a candidate for every task. */
export const ALL_ROUTES_UP_TO = 400;
const TOP = 3;

export interface InsertOptions {
  /** 1: greedy (cheapest first); 2, 3: regret-2, regret-3. */
  readonly regret: number;
  /** Random noise added to each insertion cost, up to ± this (metres); 0 for none. */
  readonly noise: number;
  /** Added to the cost of opening an empty vehicle. */
  readonly vehicleCost: number;
}

export class Inserter {
  private cost = new Float64Array(0);
  private posI = new Int32Array(0);
  private posJ = new Int32Array(0);
  private topC = new Float64Array(0);
  private topV = new Int32Array(0);
  private readonly slot: Int32Array;
  private readonly scratch: Insertion = { cost: 0, i: -1, j: -1 };
  private readonly routeCands: number[][];
  private readonly rep: Int32Array;
  private alive = new Uint8Array(0);
  private near = new Uint8Array(0);
  private readonly stamp: Int32Array;

  constructor(private readonly inst: Instance) {
    this.slot = new Int32Array(inst.tasks).fill(-1);
    this.routeCands = Array.from({ length: inst.vehicles }, () => []);
    this.rep = new Int32Array(inst.classes);
    this.stamp = new Int32Array(inst.vehicles);
  }

  /**
   * Cheapest insertion of each task in turn, into any allowed route (used ones and one empty vehicle a class): the
   * construction of large problems, where regret's recomputation after every insertion would cost too much.
   */
  insertInOrder(solution: Solution, order: readonly number[], vehicleCost: number): number[] {
    const { inst } = this;
    const m = inst.vehicles;
    const left: number[] = [];
    const seenClass = new Uint8Array(inst.classes);
    for (const t of order) {
      seenClass.fill(0);
      let best = Number.POSITIVE_INFINITY;
      let br = -1;
      let bi = -1;
      let bj = -1;
      for (let r = 0; r < m; r++) {
        if (solution.allowed[r] !== 1) continue;
        const route = solution.routes[r]!;
        if (route.nodes.length === 0) {
          const c = inst.vClass[r]!;
          if (seenClass[c] === 1) continue;
          seenClass[c] = 1;
        }
        const ins = bestInsertion(inst, route, t, route.nodes.length === 0 ? vehicleCost : 0, this.scratch);
        if (ins.cost < best) {
          best = ins.cost;
          br = r;
          bi = ins.i;
          bj = ins.j;
        }
      }
      if (br < 0) {
        left.push(t);
        continue;
      }
      insertAt(solution.routes[br]!, t, bi, bj);
      solution.refresh(br);
    }
    return left;
  }

  /** Inserts as many of `pending` as fit; returns those left out. Refreshes every route it changes. */
  insert(solution: Solution, pending: readonly number[], options: InsertOptions, random: Random): number[] {
    const { inst } = this;
    const m = inst.vehicles;
    const P = pending.length;
    if (P === 0) return [];
    if (this.cost.length < P * m) {
      this.cost = new Float64Array(P * m);
      this.posI = new Int32Array(P * m);
      this.posJ = new Int32Array(P * m);
    }
    if (this.topC.length < P * TOP) {
      this.topC = new Float64Array(P * TOP);
      this.topV = new Int32Array(P * TOP);
    }
    const { cost, topC, topV, routeCands, rep, slot } = this;
    cost.fill(Number.NaN, 0, P * m);
    for (const list of routeCands) list.length = 0;
    pending.forEach((t, pi) => {
      slot[t] = pi;
    });
    if (this.alive.length < P) this.alive = new Uint8Array(2 * P);
    const alive = this.alive;
    if (this.near.length < P) this.near = new Uint8Array(2 * P);
    alive.fill(1, 0, P);
    let aliveCount = P;
    const allRoutes = inst.tasks <= ALL_ROUTES_UP_TO;

    const evaluate = (pi: number, r: number) => {
      const t = pending[pi]!;
      const route = solution.routes[r]!;
      const ins = bestInsertion(inst, route, t, route.nodes.length === 0 ? options.vehicleCost : 0, this.scratch);
      let c = ins.cost;
      if (c !== Number.POSITIVE_INFINITY && options.noise > 0) c += options.noise * (2 * random.next() - 1);
      const cell = pi * m + r;
      if (Number.isNaN(cost[cell]!)) routeCands[r]!.push(pi);
      cost[cell] = c;
      this.posI[cell] = ins.i;
      this.posJ[cell] = ins.j;
    };

    const rescanTop = (pi: number) => {
      const b = pi * TOP;
      for (let h = 0; h < TOP; h++) {
        topC[b + h] = Number.POSITIVE_INFINITY;
        topV[b + h] = -1;
      }
      const row = pi * m;
      for (let r = 0; r < m; r++) {
        const c = cost[row + r]!;
        if (!(c < topC[b + TOP - 1]!)) continue;
        pushTop(b, c, r);
      }
    };
    const pushTop = (b: number, c: number, r: number) => {
      let h = TOP - 1;
      while (h > 0 && c < topC[b + h - 1]!) {
        topC[b + h] = topC[b + h - 1]!;
        topV[b + h] = topV[b + h - 1]!;
        h--;
      }
      topC[b + h] = c;
      topV[b + h] = r;
    };
    /** After column r changed for task pi. */
    const touch = (pi: number, r: number) => {
      const b = pi * TOP;
      for (let h = 0; h < TOP; h++)
        if (topV[b + h] === r) {
          rescanTop(pi);
          return;
        }
      const c = cost[pi * m + r]!;
      if (c < topC[b + TOP - 1]!) pushTop(b, c, r);
    };

    // Representatives: the first allowed empty vehicle of each class.
    const findRep = (c: number) => {
      for (let v = 0; v < m; v++)
        if (inst.vClass[v] === c && solution.allowed[v] === 1 && solution.routes[v]!.nodes.length === 0) return v;
      return -1;
    };
    for (let c = 0; c < inst.classes; c++) rep[c] = findRep(c);

    // Initial columns.
    const stamp = this.stamp;
    stamp.fill(-1);
    for (let pi = 0; pi < P; pi++) {
      const t = pending[pi]!;
      if (allRoutes) {
        for (let r = 0; r < m; r++)
          if (solution.allowed[r] === 1 && solution.routes[r]!.nodes.length > 0) evaluate(pi, r);
      } else {
        for (let h = 0; h < inst.k; h++) {
          const u = inst.neighbours[t * inst.k + h]!;
          if (u < 0) break;
          const r = solution.taskRoute[u]!;
          if (r < 0 || stamp[r] === pi || solution.allowed[r] !== 1) continue;
          stamp[r] = pi;
          evaluate(pi, r);
        }
      }
      for (let c = 0; c < inst.classes; c++) if (rep[c]! >= 0) evaluate(pi, rep[c]!);
      rescanTop(pi);
    }

    const regret = Math.max(1, Math.min(TOP, options.regret));
    while (aliveCount > 0) {
      // Choose.
      let chosen = -1;
      let chosenCount = 0;
      let chosenRegret = 0;
      let chosenBest = 0;
      for (let pi = 0; pi < P; pi++) {
        if (alive[pi] === 0) continue;
        const b = pi * TOP;
        const best = topC[b]!;
        if (best === Number.POSITIVE_INFINITY) continue;
        if (regret === 1) {
          if (chosen < 0 || best < chosenBest) {
            chosen = pi;
            chosenBest = best;
          }
          continue;
        }
        let count = 1;
        let reg = 0;
        for (let h = 1; h < regret; h++) {
          const c = topC[b + h]!;
          if (c === Number.POSITIVE_INFINITY) break;
          count++;
          reg += c - best;
        }
        const better =
          chosen < 0 ||
          count < chosenCount ||
          (count === chosenCount && (reg > chosenRegret || (reg === chosenRegret && best < chosenBest)));
        if (better) {
          chosen = pi;
          chosenCount = count;
          chosenRegret = reg;
          chosenBest = best;
        }
      }
      if (chosen < 0) break;
      const r = topV[chosen * TOP]!;
      const cell = chosen * m + r;
      const t = pending[chosen]!;
      const route = solution.routes[r]!;
      const wasEmpty = route.nodes.length === 0;
      insertAt(route, t, this.posI[cell]!, this.posJ[cell]!);
      solution.refresh(r);
      alive[chosen] = 0;
      aliveCount--;
      // A vehicle just opened was a candidate of every task as the empty one of its class; on a large problem it
      // stays a candidate only of the tasks near what it now holds.
      if (wasEmpty && !allRoutes) {
        const cands = routeCands[r]!;
        const near = this.near;
        near.fill(0, 0, P);
        for (const u of inst.reverseNeighbours[t]!) {
          const pi = slot[u]!;
          if (pi >= 0 && pi < P && pending[pi] === u) near[pi] = 1;
        }
        let kept = 0;
        for (let h = 0; h < cands.length; h++) {
          const pi = cands[h]!;
          if (alive[pi] === 1 && near[pi] === 1) {
            cands[kept++] = pi;
            continue;
          }
          cost[pi * m + r] = Number.NaN;
          if (alive[pi] === 1) {
            const b = pi * TOP;
            for (let x = 0; x < TOP; x++)
              if (topV[b + x] === r) {
                rescanTop(pi);
                break;
              }
          }
        }
        cands.length = kept;
      }
      // Column r again for its candidates and the tasks near t.
      const cands = routeCands[r]!;
      for (let h = 0; h < cands.length; h++) {
        const pi = cands[h]!;
        if (alive[pi] === 0) continue;
        evaluate(pi, r);
        touch(pi, r);
      }
      if (!allRoutes) {
        for (const u of inst.reverseNeighbours[t]!) {
          const pi = slot[u]!;
          if (pi < 0 || pi >= P || pending[pi] !== u || alive[pi] === 0) continue;
          if (!Number.isNaN(cost[pi * m + r]!)) continue;
          evaluate(pi, r);
          touch(pi, r);
        }
      }
      if (wasEmpty) {
        const c = inst.vClass[r]!;
        const next = findRep(c);
        rep[c] = next;
        if (next >= 0)
          for (let pi = 0; pi < P; pi++) {
            if (alive[pi] === 0) continue;
            evaluate(pi, next);
            touch(pi, next);
          }
      }
    }
    const left: number[] = [];
    for (let pi = 0; pi < P; pi++) {
      slot[pending[pi]!] = -1;
      if (alive[pi] === 1) left.push(pending[pi]!);
    }
    return left;
  }
}
