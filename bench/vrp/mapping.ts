/**
 * How bench/routing.ts maps a published instance onto the service (issue 43): 1 unit = 1 km north-south (latitude =
 * y / 111.19508 on the 6 371 008.8 m sphere, from the middle of the instance), east-west stretched so no leg is shorter
 * than the instance's (`projectionOf`), travel 60 km/h with no detour (1 unit of time = 1 minute),
 * every instant from one base. Solomon: each customer a task picked up at the depot in a zero-width window at the
 * shift's first instant, its service minutes as `to_service_s`; Li & Lim: pickups and deliveries as given. Vehicles:
 * the fleet at the depot, its capacity as `weight_kg`, its shift the depot's window. And the way back: a result's
 * stop order re-timed in the instance's own Euclidean units.
 */
import type { Point, RequestVehicle } from './checker.ts';
import type { RoutingRow } from './csv.ts';
import type { VrpInstance } from './instances.ts';

/** Kilometres per degree on the 6 371 008.8 m sphere: one instance unit is one kilometre. */
const KM_PER_DEGREE = 111.19508;
const BASE = Date.parse('2026-12-01T00:00:00Z');
export const TRAVEL = { speed_kmh: 60, detour_factor: 1 };
const at = (minutes: number) => BASE + minutes * 60_000;

/**
 * The instance's plane onto the sphere: centred on the middle of its nodes, north-south as is, east-west stretched by
 * 1 / cos of the farthest latitude. The sphere's metric then dominates the plane's everywhere the nodes lie, so no
 * great-circle leg the service times is shorter than the instance's Euclidean one, and a plan on time in the service's
 * model is on time in the instance's units (unstretched from the origin, a 1 000-customer instance's legs 500 units
 * out were 0.3 % shorter east-west: the replay found stops late by a few seconds).
 */
export function projectionOf(instance: Pick<VrpInstance, 'nodes'>): (node: { x: number; y: number }) => Point {
  const xs = instance.nodes.map((n) => n.x);
  const ys = instance.nodes.map((n) => n.y);
  const cx = (Math.min(...xs) + Math.max(...xs)) / 2;
  const cy = (Math.min(...ys) + Math.max(...ys)) / 2;
  const farthest = Math.max(...ys.map((y) => Math.abs(y - cy))) / KM_PER_DEGREE;
  const stretch = 1 / Math.cos((farthest * Math.PI) / 180);
  return (node) => ({
    latitude: (node.y - cy) / KM_PER_DEGREE,
    longitude: ((node.x - cx) * stretch) / KM_PER_DEGREE,
  });
}

interface Mapped {
  rows: RoutingRow[];
  /** Each task's pickup and drop-off node (indices into `instance.nodes`), by task_ref. */
  nodesOf: Map<string, { pickup: number; delivery: number }>;
  vehicles: RequestVehicle[];
}

/** The instance as a tasks CSV and X23's vehicles (the mapping above). */
export function mapInstance(instance: VrpInstance): Mapped {
  const depot = instance.nodes[0]!;
  const pointOf = projectionOf(instance);
  const pairs =
    instance.family === 'solomon'
      ? instance.nodes.slice(1).map((_, i) => ({ pickup: 0, delivery: i + 1 }))
      : instance.pairs;
  const nodesOf = new Map<string, { pickup: number; delivery: number }>();
  const rows = pairs.map(({ pickup, delivery }) => {
    const from = instance.nodes[pickup]!;
    const to = instance.nodes[delivery]!;
    const ref = `${instance.name}-${from.id}-${to.id}`;
    nodesOf.set(ref, { pickup, delivery });
    const solomon = instance.family === 'solomon';
    return {
      ref,
      from: pointOf(from),
      to: pointOf(to),
      fromOpenMs: at(solomon ? depot.ready : from.ready),
      fromCloseMs: at(solomon ? depot.ready : from.due),
      toOpenMs: at(to.ready),
      toCloseMs: at(to.due),
      fromServiceS: solomon ? 0 : from.service * 60,
      toServiceS: to.service * 60,
      weightKg: solomon ? to.demand : from.demand,
    };
  });
  const vehicles: RequestVehicle[] = [
    {
      id: 'truck',
      count: instance.vehicles,
      start: pointOf(depot),
      shift_start_utc: new Date(at(depot.ready)).toISOString(),
      shift_end_utc: new Date(at(depot.due)).toISOString(),
      capacity: { weight_kg: instance.capacity },
    },
  ];
  return { rows, nodesOf, vehicles };
}

/**
 * The returned routes in the instance's own units: total Euclidean distance (depot to depot) along the stop order,
 * and every window and capacity of the instance re-timed along it (travel = distance, waiting for a window to open).
 */
export function euclideanOf(
  instance: VrpInstance,
  routes: readonly (readonly { node: number; pickup: boolean; demand: number }[])[],
) {
  const depot = instance.nodes[0]!;
  const distance = (a: { x: number; y: number }, b: { x: number; y: number }) => Math.hypot(a.x - b.x, a.y - b.y);
  let total = 0;
  // DIMACS's convention (the homberger best known figures): each edge's length truncated to one decimal.
  let truncated = 0;
  const cut = (leg: number) => Math.floor(leg * 10) / 10;
  const broken: string[] = [];
  for (const [r, route] of routes.entries()) {
    let previous = depot;
    let clock = depot.ready;
    let load = 0;
    for (const stop of route) {
      const node = instance.nodes[stop.node]!;
      const leg = distance(previous, node);
      total += leg;
      truncated += cut(leg);
      // Solomon's pickups are the depot at the shift's first instant, served in no time.
      const ready = stop.pickup && instance.family === 'solomon' ? depot.ready : node.ready;
      const due = stop.pickup && instance.family === 'solomon' ? depot.ready : node.due;
      const service = stop.pickup && instance.family === 'solomon' ? 0 : node.service;
      const start = Math.max(clock + leg, ready);
      if (start > due + 1e-6) broken.push(`route ${r}: node ${node.id} served at ${start.toFixed(3)} > due ${due}`);
      clock = start + service;
      load += stop.pickup ? stop.demand : -stop.demand;
      if (load > instance.capacity + 1e-9) broken.push(`route ${r}: load ${load} at node ${node.id}`);
      previous = node;
    }
    total += distance(previous, depot);
    truncated += cut(distance(previous, depot));
    if (clock + distance(previous, depot) > depot.due + 1e-6) broken.push(`route ${r}: back after the depot closes`);
  }
  return { total, truncated, broken };
}
