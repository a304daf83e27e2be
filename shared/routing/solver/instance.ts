/**
 * The problem in the solver's own flat shape: typed arrays indexed by node (task t's pickup is node 2t, its drop-off
 * 2t + 1), by task and by vehicle; which vehicle may take which task; which tasks no vehicle can take and why; each
 * task's nearest tasks (the candidate lists that keep insertion and Shaw removal near-linear on large problems).
 */
import type { MissedWindow, RoutingProblem, UnplannedCode } from './model.ts';

/** Slack for floating-point sums of times (seconds): a start this far past a window's close still counts as in it. */
export const EPS = 1e-7;

/** The stages of a task alone, in order: the furthest one missed names a `time_window` task's reason. */
const MISSED: readonly MissedWindow[] = ['pickup', 'dropoff', 'shift_end'];

/** How many nearest tasks each task keeps as candidates. */
const NEIGHBOURS = 60;

export interface Instance {
  readonly tasks: number;
  readonly vehicles: number;
  readonly size: number;
  readonly dist: Float64Array;
  readonly dur: Float64Array;
  /** Per node (2 per task). */
  readonly loc: Int32Array;
  readonly open: Float64Array;
  readonly close: Float64Array;
  readonly service: Float64Array;
  /** Per task and dimension: `load[3 t + d]`, d = weight, volume, items. */
  readonly load: Float64Array;
  /** Per vehicle. */
  readonly vStart: Int32Array;
  /** -1: the route ends at its last stop. */
  readonly vEnd: Int32Array;
  readonly shiftStart: Float64Array;
  readonly shiftEnd: Float64Array;
  /** `cap[3 v + d]`, Infinity when unlimited. */
  readonly cap: Float64Array;
  readonly maxStops: Int32Array;
  /** Vehicles alike in everything the search looks at share a class: one empty vehicle a class is tried. */
  readonly vClass: Int32Array;
  readonly classes: number;
  /** `canServe[t * vehicles + v]`: type, capacity and the task alone within the windows and the shift. */
  readonly canServe: Uint8Array;
  /** Per task: why no vehicle can take it even alone, or null. */
  readonly impossible: readonly (UnplannedCode | null)[];
  /**
   * Per task: 1 when it is pinned (starting-state.ts: on board, or a live runsheet's own). Leaving one out costs more
   * than leaving out every other task: the driver has it already, a new task never takes its place.
   */
  readonly kept: Uint8Array;
  /** Per `time_window` task: the furthest any vehicle got alone, the window (or the shift's end) it could not meet. */
  readonly missed: readonly (MissedWindow | null)[];
  /** Nearest tasks first, `neighbours[t * k ... t * k + k)`; -1 pads. */
  readonly neighbours: Int32Array;
  readonly k: number;
  /** Tasks that list t among their nearest. */
  readonly reverseNeighbours: readonly (readonly number[])[];
  /** The longest travel between any two locations of the problem (metres). */
  readonly maxEdge: number;
  /** The latest window close or shift end (seconds), to normalise time differences. */
  readonly horizon: number;
  /** The largest task load summed over dimensions with a finite capacity somewhere, to normalise load differences. */
  readonly maxLoad: number;
}

export function buildInstance(problem: RoutingProblem): Instance {
  const { matrix, tasks: taskSpecs, vehicles: vehicleSpecs } = problem;
  const n = taskSpecs.length;
  const m = vehicleSpecs.length;
  const size = matrix.size;
  const loc = new Int32Array(2 * n);
  const open = new Float64Array(2 * n);
  const close = new Float64Array(2 * n);
  const service = new Float64Array(2 * n);
  const load = new Float64Array(3 * n);
  taskSpecs.forEach((task, t) => {
    for (const [node, stop] of [
      [2 * t, task.pickup],
      [2 * t + 1, task.dropoff],
    ] as const) {
      loc[node] = stop.location;
      open[node] = stop.open;
      close[node] = stop.close;
      service[node] = stop.serviceS;
    }
    load[3 * t] = task.load.weight;
    load[3 * t + 1] = task.load.volume;
    load[3 * t + 2] = task.load.items;
  });
  const vStart = new Int32Array(m);
  const vEnd = new Int32Array(m);
  const shiftStart = new Float64Array(m);
  const shiftEnd = new Float64Array(m);
  const cap = new Float64Array(3 * m);
  const maxStops = new Int32Array(m);
  const vClass = new Int32Array(m);
  const classKeys = new Map<string, number>();
  vehicleSpecs.forEach((v, i) => {
    vStart[i] = v.start;
    vEnd[i] = v.end ?? -1;
    shiftStart[i] = v.shiftStart;
    shiftEnd[i] = v.shiftEnd;
    cap[3 * i] = v.capacity.weight;
    cap[3 * i + 1] = v.capacity.volume;
    cap[3 * i + 2] = v.capacity.items;
    maxStops[i] = Math.max(0, Math.min(v.maxStops, 2 ** 30));
    const key = JSON.stringify([
      v.start,
      v.end,
      v.shiftStart,
      v.shiftEnd,
      [v.capacity.weight, v.capacity.volume, v.capacity.items].map(String),
      v.serviceTypes ? [...v.serviceTypes].sort() : null,
      v.maxStops,
    ]);
    let c = classKeys.get(key);
    if (c === undefined) {
      c = classKeys.size;
      classKeys.set(key, c);
    }
    vClass[i] = c;
  });

  const dist = matrix.distanceM;
  const dur = matrix.durationS;
  let maxEdge = 0;
  for (let i = 0; i < dist.length; i++) if (dist[i]! > maxEdge && Number.isFinite(dist[i]!)) maxEdge = dist[i]!;
  let horizon = 0;
  for (let v = 0; v < m; v++) horizon = Math.max(horizon, shiftEnd[v]!);
  const finiteDims = [0, 1, 2].filter((d) => vehicleSpecs.some((_, v) => Number.isFinite(cap[3 * v + d]!)));
  let maxLoad = 0;
  for (let t = 0; t < n; t++) {
    let s = 0;
    for (const d of finiteDims) s += load[3 * t + d]!;
    maxLoad = Math.max(maxLoad, s);
  }

  const canServe = new Uint8Array(n * m);
  const kept = new Uint8Array(n);
  const impossible: (UnplannedCode | null)[] = [];
  const missed: (MissedWindow | null)[] = [];
  for (let t = 0; t < n; t++) {
    const pinned = taskSpecs[t]!.vehicles;
    if (pinned) {
      // A pinned task (starting-state.ts: a live runsheet's own) goes on its vehicles alone, and is never left out
      // for a reason found alone: the routes' own checks judge each place it is put in.
      for (const v of pinned) if (v >= 0 && v < m) canServe[t * m + v] = 1;
      kept[t] = 1;
      impossible.push(null);
      missed.push(null);
      continue;
    }
    const type = taskSpecs[t]!.serviceType;
    let typed = false;
    let fits = false;
    let served = false;
    let furthest = -1;
    for (let v = 0; v < m; v++) {
      const types = vehicleSpecs[v]!.serviceTypes;
      if (types && (type === undefined || !types.includes(type))) continue;
      typed = true;
      if (
        maxStops[v]! < 2 ||
        load[3 * t]! > cap[3 * v]! ||
        load[3 * t + 1]! > cap[3 * v + 1]! ||
        load[3 * t + 2]! > cap[3 * v + 2]!
      )
        continue;
      fits = true;
      const miss = aloneMissed(t, v);
      if (miss === null) {
        served = true;
        canServe[t * m + v] = 1;
      } else furthest = Math.max(furthest, MISSED.indexOf(miss));
    }
    const code = served ? null : !typed ? 'service_type' : !fits ? 'capacity' : 'time_window';
    impossible.push(code);
    missed.push(code === 'time_window' ? MISSED[furthest]! : null);
  }

  /** The task alone on vehicle v: null when it is feasible, else the first window (or the shift's end) it misses. */
  function aloneMissed(t: number, v: number): MissedWindow | null {
    const p = 2 * t;
    const d = p + 1;
    const s = vStart[v]!;
    let time = Math.max(open[p]!, shiftStart[v]! + dur[s * size + loc[p]!]!);
    if (time > close[p]! + EPS) return 'pickup';
    time = Math.max(open[d]!, time + service[p]! + dur[loc[p]! * size + loc[d]!]!);
    if (time > close[d]! + EPS) return 'dropoff';
    const e = vEnd[v]!;
    time += service[d]! + (e < 0 ? 0 : dur[loc[d]! * size + e]!);
    return time <= shiftEnd[v]! + EPS ? null : 'shift_end';
  }

  // Nearest tasks by the pickups' and the drop-offs' distances (both ways), among tasks that can be planned.
  const k = Math.min(NEIGHBOURS, Math.max(0, n - 1));
  const neighbours = new Int32Array(n * k).fill(-1);
  const reverse: number[][] = Array.from({ length: n }, () => []);
  if (k > 0) {
    const keys = new Float64Array(n);
    // Tasks due at the same time of day are nearer: window middles (bounded by the horizon) at the mean speed.
    let metres = 0;
    let seconds = 0;
    for (let i = 0; i < dist.length; i += 1 + Math.floor(dist.length / 4096)) {
      metres += dist[i]!;
      seconds += dur[i]!;
    }
    const speed = seconds > 0 ? metres / seconds : 0;
    const mid = new Float64Array(2 * n);
    for (let node = 0; node < 2 * n; node++)
      mid[node] = (Math.max(0, open[node]!) + Math.min(horizon, close[node]!)) / 2;
    const order = new Int32Array(n);
    for (let t = 0; t < n; t++) {
      if (impossible[t] !== null) continue;
      const pt = loc[2 * t]!;
      const dt = loc[2 * t + 1]!;
      let count = 0;
      for (let u = 0; u < n; u++) {
        if (u === t || impossible[u] !== null) continue;
        const pu = loc[2 * u]!;
        const du = loc[2 * u + 1]!;
        keys[u] =
          Math.min(
            dist[pt * size + pu]! + dist[dt * size + du]!,
            dist[pt * size + du]! + dist[dt * size + pu]!,
            dist[dt * size + pu]!,
            dist[du * size + pt]!,
          ) +
          speed * (Math.abs(mid[2 * t]! - mid[2 * u]!) + Math.abs(mid[2 * t + 1]! - mid[2 * u + 1]!)) * 0.5;
        order[count++] = u;
      }
      const kk = Math.min(k, count);
      if (kk < count) selectSmallest(order, count, keys, kk);
      const sorted = Array.from(order.subarray(0, kk)).sort((a, b) => keys[a]! - keys[b]! || a - b);
      for (let i = 0; i < kk; i++) {
        neighbours[t * k + i] = sorted[i]!;
        reverse[sorted[i]!]!.push(t);
      }
    }
  }

  return {
    tasks: n,
    vehicles: m,
    size,
    dist,
    dur,
    loc,
    open,
    close,
    service,
    load,
    vStart,
    vEnd,
    shiftStart,
    shiftEnd,
    cap,
    maxStops,
    vClass,
    classes: classKeys.size,
    canServe,
    impossible,
    kept,
    missed,
    neighbours,
    k,
    reverseNeighbours: reverse,
    maxEdge,
    horizon,
    maxLoad,
  };
}

/** Moves the `k` smallest (by key, then index) to the front of `items[0, count)`, in expected linear time. */
export function selectSmallest(items: Int32Array, count: number, keys: Float64Array, k: number): void {
  const less = (x: number, y: number) => keys[x]! < keys[y]! || (keys[x] === keys[y] && x < y);
  let lo = 0;
  let hi = count - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = items[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (less(items[i]!, pivot)) i++;
      while (less(pivot, items[j]!)) j--;
      if (i <= j) {
        const x = items[i]!;
        items[i] = items[j]!;
        items[j] = x;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
}

/** The location of a route's position k: its start before the first stop, its end after the last. */
export function stopAt(loc: Int32Array, nodes: readonly number[], start: number, end: number, k: number): number {
  return k < 0 ? start : k >= nodes.length ? end : loc[nodes[k]!]!;
}

/** The distance between two locations; 0 from or to none (a route without a start or an end: negative). */
export function legDistance(inst: Instance, a: number, b: number): number {
  return a < 0 || b < 0 ? 0 : inst.dist[a * inst.size + b]!;
}
