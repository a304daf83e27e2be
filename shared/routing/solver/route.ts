/**
 * One vehicle's route and its O(1)-per-move bookkeeping (Savelsbergh's forward and backward time slack): for each
 * position, the earliest service start given what comes before (`earliest`), the latest service start that keeps
 * everything after it within its window and the shift (`latest`), and the load on board after it. Inserting a task's
 * pickup before position i and its drop-off before position j is then checked while j walks forward from i: the
 * delay pushed into the stops between is carried along, and the rest of the route is judged by `latest` alone.
 */
import { EPS, type Instance } from './instance.ts';

export class Route {
  nodes: number[] = [];
  earliest = new Float64Array(16);
  latest = new Float64Array(16);
  /** Load on board after position k, `loads[3 k + d]`. */
  loads = new Float64Array(48);
  distance = 0;
  constructor(readonly vehicle: number) {}

  get size(): number {
    return this.nodes.length;
  }

  /** Recomputes the caches; false when the order breaks a window, the shift or a capacity. */
  update(inst: Instance): boolean {
    const { nodes } = this;
    const L = nodes.length;
    if (this.earliest.length < L) {
      const c = Math.max(L, this.earliest.length * 2);
      this.earliest = new Float64Array(c);
      this.latest = new Float64Array(c);
      this.loads = new Float64Array(3 * c);
    }
    const { dist, dur, size, loc, open, close, service, load, cap } = inst;
    const v = this.vehicle;
    const end = inst.vEnd[v]!;
    let ok = true;
    let prev = inst.vStart[v]!;
    let time = inst.shiftStart[v]!;
    let distance = 0;
    let w = 0;
    let vol = 0;
    let items = 0;
    const cw = cap[3 * v]! + EPS;
    const cv = cap[3 * v + 1]! + EPS;
    const ci = cap[3 * v + 2]! + EPS;
    for (let k = 0; k < L; k++) {
      const node = nodes[k]!;
      const l = loc[node]!;
      distance += dist[prev * size + l]!;
      time = Math.max(open[node]!, time + dur[prev * size + l]!);
      if (time > close[node]! + EPS) ok = false;
      this.earliest[k] = time;
      time += service[node]!;
      const t3 = 3 * (node >> 1);
      const sign = node & 1 ? -1 : 1;
      w += sign * load[t3]!;
      vol += sign * load[t3 + 1]!;
      items += sign * load[t3 + 2]!;
      if (w > cw || vol > cv || items > ci) ok = false;
      this.loads[3 * k] = w;
      this.loads[3 * k + 1] = vol;
      this.loads[3 * k + 2] = items;
      prev = l;
    }
    let latest = inst.shiftEnd[v]!;
    if (L > 0) {
      if (end >= 0) {
        distance += dist[prev * size + end]!;
        time += dur[prev * size + end]!;
      }
      if (time > latest + EPS) ok = false;
      let next = end;
      for (let k = L - 1; k >= 0; k--) {
        const node = nodes[k]!;
        const l = loc[node]!;
        const travel = next < 0 ? 0 : dur[l * size + next]!;
        latest = Math.min(close[node]!, latest - travel - service[node]!);
        this.latest[k] = latest;
        next = l;
      }
    }
    this.distance = distance;
    return ok;
  }
}

export interface Insertion {
  /** Added distance (plus `fixed` when the route was empty); Infinity when no position is feasible. */
  cost: number;
  /** The pickup goes before position i, the drop-off before position j of the route as it was (j >= i). */
  i: number;
  j: number;
}

/**
 * The cheapest feasible insertion of task t into the route, by enumerating pickup positions i and, for each, drop-off
 * positions j >= i with every constraint checked in O(1) per (i, j). Positions strictly inside a run of stops at the
 * pickup's own location are skipped (they cost the same as the run's ends: e.g. loading at a depot).
 */
export function bestInsertion(inst: Instance, route: Route, t: number, fixed: number, out: Insertion): Insertion {
  out.cost = Number.POSITIVE_INFINITY;
  out.i = -1;
  out.j = -1;
  const v = route.vehicle;
  if (inst.canServe[t * inst.vehicles + v] === 0) return out;
  const { nodes, earliest, latest, loads } = route;
  const L = nodes.length;
  if (L + 2 > inst.maxStops[v]!) return out;
  const { dist, dur, size, loc, open, close, service, load, cap } = inst;
  const p = 2 * t;
  const d = p + 1;
  const lp = loc[p]!;
  const ld = loc[d]!;
  const openP = open[p]!;
  const closeP = close[p]! + EPS;
  const openD = open[d]!;
  const closeD = close[d]! + EPS;
  const svcP = service[p]!;
  const svcD = service[d]!;
  const qw = load[3 * t]!;
  const qv = load[3 * t + 1]!;
  const qi = load[3 * t + 2]!;
  const cw = cap[3 * v]! + EPS - qw;
  const cv = cap[3 * v + 1]! + EPS - qv;
  const ci = cap[3 * v + 2]! + EPS - qi;
  const startLoc = inst.vStart[v]!;
  const endLoc = inst.vEnd[v]!;
  const shiftEnd = inst.shiftEnd[v]! + EPS;
  const base = L === 0 ? fixed : 0;
  const dPD = dist[lp * size + ld]!;
  const tPD = dur[lp * size + ld]!;
  let best = Number.POSITIVE_INFINITY;
  let bi = -1;
  let bj = -1;
  for (let i = 0; i <= L; i++) {
    const prevLoc = i === 0 ? startLoc : loc[nodes[i - 1]!]!;
    const prevDep = i === 0 ? inst.shiftStart[v]! : earliest[i - 1]! + service[nodes[i - 1]!]!;
    if (prevDep > closeP) break;
    const nextLoc = i === L ? endLoc : loc[nodes[i]!]!;
    if (i < L && nextLoc === lp && prevLoc === lp) continue;
    if (i > 0 && (loads[3 * (i - 1)]! > cw || loads[3 * (i - 1) + 1]! > cv || loads[3 * (i - 1) + 2]! > ci)) continue;
    const startP = Math.max(openP, prevDep + dur[prevLoc * size + lp]!);
    if (startP > closeP) continue;
    const depP = startP + svcP;
    const dPrevP = dist[prevLoc * size + lp]!;
    // j === i: the drop-off right after the pickup.
    {
      const startD = Math.max(openD, depP + tPD);
      if (startD <= closeD) {
        const depD = startD + svcD;
        const ok =
          i === L
            ? depD + (endLoc < 0 ? 0 : dur[ld * size + endLoc]!) <= shiftEnd
            : depD + dur[ld * size + nextLoc]! <= latest[i]! + EPS;
        if (ok) {
          const cost =
            i === L
              ? dPrevP +
                dPD +
                (endLoc < 0 ? 0 : dist[ld * size + endLoc]!) -
                (endLoc < 0 || i === 0 ? 0 : dist[prevLoc * size + endLoc]!)
              : dPrevP + dPD + dist[ld * size + nextLoc]! - dist[prevLoc * size + nextLoc]!;
          if (cost < best) {
            best = cost;
            bi = i;
            bj = i;
          }
        }
      }
    }
    if (i === L) break;
    // j > i: the pickup's detour, then carry the delay through positions i..j-1.
    const deltaP = dPrevP + dist[lp * size + nextLoc]! - dist[prevLoc * size + nextLoc]!;
    let curLoc = lp;
    let curDep = depP;
    for (let j = i + 1; j <= L; j++) {
      const k = j - 1;
      const node = nodes[k]!;
      const l = loc[node]!;
      const st = Math.max(open[node]!, curDep + dur[curLoc * size + l]!);
      if (st > latest[k]! + EPS) break;
      if (loads[3 * k]! > cw || loads[3 * k + 1]! > cv || loads[3 * k + 2]! > ci) break;
      curDep = st + service[node]!;
      curLoc = l;
      if (curDep > closeD) break;
      const startD = Math.max(openD, curDep + dur[curLoc * size + ld]!);
      if (startD > closeD) continue;
      const depD = startD + svcD;
      let cost: number;
      if (j === L) {
        if (depD + (endLoc < 0 ? 0 : dur[ld * size + endLoc]!) > shiftEnd) continue;
        cost =
          deltaP +
          dist[curLoc * size + ld]! +
          (endLoc < 0 ? 0 : dist[ld * size + endLoc]! - dist[curLoc * size + endLoc]!);
      } else {
        const nl = loc[nodes[j]!]!;
        if (depD + dur[ld * size + nl]! > latest[j]! + EPS) continue;
        cost = deltaP + dist[curLoc * size + ld]! + dist[ld * size + nl]! - dist[curLoc * size + nl]!;
      }
      if (cost < best) {
        best = cost;
        bi = i;
        bj = j;
      }
    }
  }
  if (bi >= 0) {
    out.cost = best + base;
    out.i = bi;
    out.j = bj;
  }
  return out;
}

/** Puts task t's pickup before position i and its drop-off before position j (of the route before the insertion). */
export function insertAt(route: Route, t: number, i: number, j: number): void {
  route.nodes.splice(j, 0, 2 * t + 1);
  route.nodes.splice(i, 0, 2 * t);
}

/** Takes task t out of the route (both its stops). */
export function removeTask(route: Route, t: number): void {
  const p = 2 * t;
  route.nodes = route.nodes.filter((node) => node !== p && node !== p + 1);
}
