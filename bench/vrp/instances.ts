/**
 * The route-planning benchmark instances of `../shared/vrp/` (its README gives the formats): Solomon's VRPTW and
 * Li & Lim's PDPTW files parsed into one neutral shape, with the best known distances (`BKS.json`) and VROOM's
 * figures (`vroom-x5.txt`) beside each. Used by the solver's direct benchmark (`bench/routing-solver.ts`) and by the
 * service-path benchmark. Units are the files' own (distance and time in instance units; the benchmarks map them).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type VrpFamily = 'solomon' | 'lilim';

export interface VrpNode {
  /** The file's node number (0 is the depot). */
  readonly id: number;
  readonly x: number;
  readonly y: number;
  /** Solomon: the customer's demand; Li & Lim: positive at a pickup, negative at its delivery. */
  readonly demand: number;
  readonly ready: number;
  readonly due: number;
  readonly service: number;
}

export interface VrpInstance {
  readonly name: string;
  readonly family: VrpFamily;
  /** `nodes[0]` is the depot. */
  readonly nodes: readonly VrpNode[];
  /** Li & Lim: each pickup node with its delivery node (indices into `nodes`). Solomon: none (customers only). */
  readonly pairs: readonly { readonly pickup: number; readonly delivery: number }[];
  readonly vehicles: number;
  readonly capacity: number;
  /** The best known total distance to compare a distance objective with (Solomon `<name>_distance`). */
  readonly bestKnownDistance: number | undefined;
  /** The best known cost of the vehicles-first ranking, and its vehicle count. */
  readonly bestKnown: { readonly cost: number; readonly vehicles: number } | undefined;
  /** VROOM v1.14.0 `-t 1 -x 5` on this instance (`vroom-x5.txt`). */
  readonly vroom:
    | { readonly distance: number; readonly vehicles: number; readonly gapPercent: number; readonly seconds: number }
    | undefined;
  /** VROOM `-x 0` on this instance (`vroom-x0.txt`, the homberger set only). */
  readonly vroomX0?:
    | { readonly distance: number; readonly vehicles: number; readonly gapPercent: number; readonly seconds: number }
    | undefined;
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** `VRP_DIR`, else `../shared/vrp` beside the repository (or beside the worktrees' folder). */
export function vrpDirectory(): string {
  const fromEnv = process.env['VRP_DIR'];
  if (fromEnv) return resolve(fromEnv);
  const candidates = [resolve(repoRoot, '../shared/vrp'), resolve(repoRoot, '../../shared/vrp')];
  return candidates.find((c) => existsSync(c)) ?? candidates[0]!;
}

function numbersOf(line: string): number[] {
  return line
    .trim()
    .split(/\s+/)
    .filter((t) => t !== '')
    .map(Number);
}

/** Solomon: header lines, `VEHICLE NUMBER CAPACITY` then the nodes' 7-column lines (node 0 the depot). */
export function parseSolomon(
  name: string,
  text: string,
): Omit<VrpInstance, 'bestKnownDistance' | 'bestKnown' | 'vroom'> {
  const lines = text.split(/\r?\n/);
  let vehicles = 0;
  let capacity = 0;
  const nodes: VrpNode[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*VEHICLE/.test(line)) {
      for (let j = i + 1; j < lines.length; j++) {
        const n = numbersOf(lines[j]!);
        if (n.length === 2 && n.every(Number.isFinite)) {
          [vehicles, capacity] = n as [number, number];
          i = j;
          break;
        }
      }
      continue;
    }
    const n = numbersOf(line);
    if (n.length === 7 && n.every(Number.isFinite)) {
      const [id, x, y, demand, ready, due, service] = n as [number, number, number, number, number, number, number];
      nodes.push({ id, x, y, demand, ready, due, service });
    }
  }
  if (nodes[0]?.id !== 0 || vehicles <= 0) throw new Error(`${name}: not a Solomon file`);
  return { name, family: 'solomon', nodes, pairs: [], vehicles, capacity };
}

/** Li & Lim: `vehicles capacity speed`, then `id x y demand ready due service pickup delivery` per node. */
export function parseLiLim(name: string, text: string): Omit<VrpInstance, 'bestKnownDistance' | 'bestKnown' | 'vroom'> {
  const rows = text
    .split(/\r?\n/)
    .map(numbersOf)
    .filter((n) => n.length > 0);
  const [vehicles, capacity] = rows[0] as [number, number];
  const nodes: VrpNode[] = [];
  const pairs: { pickup: number; delivery: number }[] = [];
  const byId = new Map<number, number>();
  const raw = rows.slice(1).filter((n) => n.length === 9);
  for (const [id, x, y, demand, ready, due, service] of raw as number[][]) {
    byId.set(id!, nodes.length);
    nodes.push({ id: id!, x: x!, y: y!, demand: demand!, ready: ready!, due: due!, service: service! });
  }
  for (const row of raw) {
    const [id, , , demand, , , , , delivery] = row as [number, ...number[]];
    if (id !== 0 && demand! > 0) {
      const d = byId.get(delivery!);
      if (d === undefined) throw new Error(`${name}: pickup ${id} names no delivery`);
      pairs.push({ pickup: byId.get(id)!, delivery: d });
    }
  }
  if (nodes[0]?.id !== 0 || pairs.length === 0) throw new Error(`${name}: not a Li & Lim file`);
  return { name, family: 'lilim', nodes, pairs, vehicles, capacity };
}

/** VROOM's lines: `C101     vroom -x 5:    828.94 (10 veh) bks 828.94 (10) gap  -0.00%   0.20s ...`. */
export function parseVroom(text: string): Map<string, NonNullable<VrpInstance['vroom']>> {
  const out = new Map<string, NonNullable<VrpInstance['vroom']>>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^(\S+)\s+vroom.*?:\s+([\d.]+)\s+\((\d+) veh\).*?gap\s+(-?[\d.]+)%\s+([\d.]+)s/.exec(line);
    if (m)
      out.set(m[1]!, {
        distance: Number(m[2]),
        vehicles: Number(m[3]),
        gapPercent: Number(m[4]),
        seconds: Number(m[5]),
      });
  }
  return out;
}

interface BksEntry {
  best_known_cost: number;
  solved_with_vehicles: number;
}

/**
 * Every instance of both families (Solomon first), optionally only those named (case-insensitive); with `set`
 * `homberger`, Gehring & Homberger's 1 000-customer instances of `homberger/` instead (Solomon's layout).
 */
export function loadVrpInstances(
  options: { dir?: string; names?: readonly string[]; set?: 'classic' | 'homberger' } = {},
): VrpInstance[] {
  const dir = options.dir ?? vrpDirectory();
  const wanted = options.names?.map((n) => n.toLowerCase());
  if (options.set === 'homberger') return loadHomberger(join(dir, 'homberger'), wanted);
  const vroomPath = join(dir, 'vroom-x5.txt');
  const vroom = existsSync(vroomPath) ? parseVroom(readFileSync(vroomPath, 'utf8')) : new Map();
  const out: VrpInstance[] = [];
  for (const family of ['solomon', 'lilim'] as const) {
    const folder = join(dir, family);
    if (!existsSync(folder)) continue;
    const bksPath = join(folder, 'BKS.json');
    const bks: Record<string, BksEntry> = existsSync(bksPath) ? JSON.parse(readFileSync(bksPath, 'utf8')) : {};
    for (const file of readdirSync(folder).sort()) {
      if (!file.endsWith('.txt')) continue;
      const name = file.slice(0, -4);
      if (wanted && !wanted.includes(name.toLowerCase())) continue;
      const text = readFileSync(join(folder, file), 'utf8');
      const parsed = family === 'solomon' ? parseSolomon(name, text) : parseLiLim(name, text);
      const best = bks[name];
      const bestDistance = bks[`${name}_distance`] ?? best;
      out.push({
        ...parsed,
        bestKnownDistance: bestDistance?.best_known_cost,
        bestKnown: best ? { cost: best.best_known_cost, vehicles: best.solved_with_vehicles } : undefined,
        vroom: vroom.get(name),
      });
    }
  }
  return out;
}

function loadHomberger(folder: string, wanted: readonly string[] | undefined): VrpInstance[] {
  if (!existsSync(folder)) return [];
  const read = (file: string) => (existsSync(join(folder, file)) ? readFileSync(join(folder, file), 'utf8') : '');
  const x5 = parseVroom(read('vroom-x5.txt'));
  const x0 = parseVroom(read('vroom-x0.txt'));
  const bksText = read('BKS.json');
  const bks: Record<string, BksEntry> = bksText ? JSON.parse(bksText) : {};
  const out: VrpInstance[] = [];
  for (const file of readdirSync(folder).sort()) {
    if (!file.endsWith('.txt') || file.startsWith('vroom')) continue;
    const name = file.slice(0, -4);
    if (wanted && !wanted.includes(name.toLowerCase())) continue;
    const best = bks[`${name}_distance`] ?? bks[name];
    out.push({
      ...parseSolomon(name, read(file)),
      bestKnownDistance: best?.best_known_cost,
      bestKnown: best ? { cost: best.best_known_cost, vehicles: best.solved_with_vehicles } : undefined,
      vroom: x5.get(name),
      vroomX0: x0.get(name),
    });
  }
  return out;
}
