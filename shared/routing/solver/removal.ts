/**
 * ALNS removal operators (Ropke & Pisinger 2006), each choosing q planned tasks to take out: random; worst (the tasks
 * whose two stops cost the most detour, chosen with a randomised rank y^p); Shaw's related removal (close pickups and
 * drop-offs, close service times, alike loads, same vehicle); and one whole route (room to empty a vehicle).
 */
import { type Instance, legDistance, selectSmallest, stopAt } from './instance.ts';
import type { Random } from './random.ts';
import type { Solution } from './solution.ts';

export type Removal = (solution: Solution, q: number, random: Random) => number[];

const WORST_P = 3;
const SHAW_P = 6;

/** Takes the tasks out of their routes; false when a shortened route breaks a window (a matrix without the triangle
 * inequality can make a shortcut slower). */
/** Per-problem buffers the operators reuse instead of allocating each iteration. */
interface Buffers {
  readonly flags: Uint8Array;
  readonly pool: Int32Array;
  readonly keys: Float64Array;
  readonly touched: Uint8Array;
}
const buffers = new WeakMap<Instance, Buffers>();
function buffersOf(inst: Instance): Buffers {
  let b = buffers.get(inst);
  if (!b) {
    b = {
      flags: new Uint8Array(2 * inst.tasks),
      pool: new Int32Array(inst.tasks),
      keys: new Float64Array(inst.tasks),
      touched: new Uint8Array(inst.vehicles),
    };
    buffers.set(inst, b);
  }
  return b;
}

/** Takes the tasks out of their routes; false when a shortened route breaks a window (a matrix without the triangle
 * inequality can make a shortcut slower). */
export function takeOut(solution: Solution, tasks: readonly number[]): boolean {
  const { flags: gone, touched } = buffersOf(solution.inst);
  const routes: number[] = [];
  for (const t of tasks) {
    const r = solution.taskRoute[t]!;
    if (r < 0) continue;
    if (touched[r] === 0) {
      touched[r] = 1;
      routes.push(r);
    }
    gone[2 * t] = 1;
    gone[2 * t + 1] = 1;
    solution.taskRoute[t] = -1;
    solution.pos[2 * t] = -1;
    solution.pos[2 * t + 1] = -1;
  }
  let ok = true;
  for (const r of routes) {
    touched[r] = 0;
    const route = solution.routes[r]!;
    const nodes = route.nodes;
    let kept = 0;
    for (let k = 0; k < nodes.length; k++) if (gone[nodes[k]!] === 0) nodes[kept++] = nodes[k]!;
    nodes.length = kept;
    if (!solution.refresh(r)) ok = false;
  }
  for (const t of tasks) {
    gone[2 * t] = 0;
    gone[2 * t + 1] = 0;
  }
  return ok;
}

export const randomRemoval: Removal = (solution, q, random) => {
  const planned = random.shuffle(solution.planned());
  return planned.slice(0, q);
};

/** Distance saved by taking task t out of its route. */
export function removalGain(solution: Solution, t: number): number {
  const { inst } = solution;
  const r = solution.taskRoute[t]!;
  const route = solution.routes[r]!;
  const { nodes } = route;
  const { loc } = inst;
  const a = solution.pos[2 * t]!;
  const b = solution.pos[2 * t + 1]!;
  const start = inst.vStart[r]!;
  const end = inst.vEnd[r]!;
  if (nodes.length === 2) return route.distance;
  const la = stopAt(loc, nodes, start, end, a);
  const lb = stopAt(loc, nodes, start, end, b);
  if (b === a + 1) {
    const prev = stopAt(loc, nodes, start, end, a - 1);
    const next = stopAt(loc, nodes, start, end, b + 1);
    return (
      legDistance(inst, prev, la) +
      legDistance(inst, la, lb) +
      legDistance(inst, lb, next) -
      legDistance(inst, prev, next)
    );
  }
  const pa = stopAt(loc, nodes, start, end, a - 1);
  const na = stopAt(loc, nodes, start, end, a + 1);
  const pb = stopAt(loc, nodes, start, end, b - 1);
  const nb = stopAt(loc, nodes, start, end, b + 1);
  return (
    legDistance(inst, pa, la) +
    legDistance(inst, la, na) -
    legDistance(inst, pa, na) +
    legDistance(inst, pb, lb) +
    legDistance(inst, lb, nb) -
    legDistance(inst, pb, nb)
  );
}

export const worstRemoval: Removal = (solution, q, random) => {
  const planned = solution.planned();
  const gain = buffersOf(solution.inst).keys;
  for (const t of planned) gain[t] = removalGain(solution, t);
  planned.sort((x, y) => gain[y]! - gain[x]! || x - y);
  const out: number[] = [];
  while (out.length < q && planned.length > 0) {
    const k = Math.floor(random.next() ** WORST_P * planned.length);
    out.push(planned.splice(k, 1)[0]!);
  }
  return out;
};

/** Relatedness of two planned tasks: lower is more related. */
function relatedness(solution: Solution, inst: Instance, a: number, b: number): number {
  const { dist, size, loc, load } = inst;
  const pa = 2 * a;
  const pb = 2 * b;
  const ra = solution.taskRoute[a]!;
  const rb = solution.taskRoute[b]!;
  const routeA = solution.routes[ra]!.earliest;
  const routeB = solution.routes[rb]!.earliest;
  const pos = solution.pos;
  const distance = dist[loc[pa]! * size + loc[pb]!]! + dist[loc[pa + 1]! * size + loc[pb + 1]!]!;
  const time =
    Math.abs(routeA[pos[pa]!]! - routeB[pos[pb]!]!) + Math.abs(routeA[pos[pa + 1]!]! - routeB[pos[pb + 1]!]!);
  let l = 0;
  for (let d = 0; d < 3; d++) {
    const x = load[3 * a + d]!;
    const y = load[3 * b + d]!;
    if (Number.isFinite(x) && Number.isFinite(y)) l += Math.abs(x - y);
  }
  return (
    (9 * distance) / (inst.maxEdge || 1) +
    (3 * time) / (inst.horizon || 1) +
    (2 * l) / (inst.maxLoad || 1) +
    (ra === rb ? 0 : 1)
  );
}

export const shawRemoval: Removal = (solution, q, random) => {
  const { inst } = solution;
  const planned = solution.planned();
  if (planned.length === 0) return [];
  const { flags: removed, pool, keys } = buffersOf(inst);
  const out: number[] = [planned[random.below(planned.length)]!];
  removed[out[0]!] = 1;
  const large = inst.tasks > 400;
  while (out.length < q && out.length < planned.length) {
    const seed = out[random.below(out.length)]!;
    let count = 0;
    if (large)
      for (let h = 0; h < inst.k; h++) {
        const u = inst.neighbours[seed * inst.k + h]!;
        if (u < 0) break;
        if (solution.taskRoute[u]! >= 0 && removed[u] === 0) pool[count++] = u;
      }
    if (count === 0) for (const u of planned) if (removed[u] === 0) pool[count++] = u;
    for (let h = 0; h < count; h++) keys[pool[h]!] = relatedness(solution, inst, seed, pool[h]!);
    const rank = Math.floor(random.next() ** SHAW_P * count);
    selectSmallest(pool, count, keys, rank + 1);
    const u = pool[rank]!;
    removed[u] = 1;
    out.push(u);
  }
  for (const t of out) removed[t] = 0;
  return out;
};

/** A whole route (a random used one, shorter ones likelier), whatever q. */
export const routeRemoval: Removal = (solution, _q, random) => {
  const used = solution.routes.filter((r) => r.nodes.length > 0);
  if (used.length === 0) return [];
  used.sort((x, y) => x.nodes.length - y.nodes.length || x.vehicle - y.vehicle);
  const route = used[Math.floor(random.next() ** 2 * used.length)]!;
  return route.nodes.filter((n) => (n & 1) === 0).map((n) => n >> 1);
};
