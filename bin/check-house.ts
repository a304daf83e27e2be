/**
 * `npm run lint`'s check of the house's shape (docs/design.md, "The house"; issue 44): over the import graph of
 * bin/, lib/, functions/ and shared/ (every `import`, `export … from` and `import()`, types included), it fails on
 *
 * - a circle: files that import each other, directly or round a loop (the one who defines an interface owns it);
 * - an import from shared/ into lib/ (the service does not need its own client, its CDK or its local host);
 * - an import from the domain (shared/ below shared/http and shared/routes) into shared/http: the domain throws
 *   shared/errors.ts's vocabulary and the HTTP floor alone turns it into problem+json (the files still migrating are
 *   listed below, and the list may only shrink);
 * - the map at the top of docs/design.md drifting: a room it names that is not there, a file in no room it names, or
 *   an import that climbs a floor (a room imports rooms on its own floor or below; an `apart` room, the client
 *   package and the console, imports only apart rooms, and only lib/ and bin/ import it).
 * - a file in shared/ over MAX_LINES lines (issue 56: a room holds one idea; the files still to split are listed in
 *   LONG_PENDING at their length, each may only shrink, and an entry goes once its file is within the bound).
 *
 * `tsx bin/check-house.ts` prints each finding and exits 1 if there is one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { ROOT } from '#lib/paths';

const TOPS = ['bin', 'lib', 'functions', 'shared'];
const MAP_START = '<!-- house-map:start -->';
const MAP_END = '<!-- house-map:end -->';

export interface Edge {
  from: string;
  to: string;
}

/** Every .ts file of the house, relative to `root`. */
export function houseFiles(root = ROOT): string[] {
  const files: string[] = [];
  for (const top of TOPS) {
    for (const entry of readdirSync(join(root, top), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.ts')) files.push(relative(root, join(entry.parentPath, entry.name)));
    }
  }
  return files.sort();
}

/** The house file an import names (`#shared/…`, `#lib/…` or relative); undefined for a package. */
function resolveImport(root: string, from: string, specifier: string): string | undefined {
  let base: string;
  if (specifier.startsWith('#shared/')) base = `shared/${specifier.slice('#shared/'.length)}`;
  else if (specifier.startsWith('#lib/')) base = `lib/${specifier.slice('#lib/'.length)}`;
  else if (specifier.startsWith('.')) base = normalize(join(dirname(from), specifier));
  else return undefined;
  const candidates = [base, `${base}.ts`, base.replace(/\.js$/, '.ts'), `${base}/index.ts`];
  return candidates.find((candidate) => candidate.endsWith('.ts') && existsSync(join(root, candidate))) ?? base;
}

export function importEdges(root = ROOT, files = houseFiles(root)): Edge[] {
  const edges: Edge[] = [];
  for (const from of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, from), 'utf8'), true, true);
    for (const imported of importedFiles) {
      const to = resolveImport(root, from, imported.fileName);
      if (to) edges.push({ from, to });
    }
  }
  return edges;
}

/** The circles: each strongly connected set of two or more files (or a file importing itself), Tarjan's way. */
export function circles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const members: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        members.push(member);
      } while (member !== node);
      if (members.length > 1 || next.get(node)?.includes(node)) found.push(members.sort());
    }
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

export interface Room {
  /** A folder (ending in `/`) or a file. */
  path: string;
  /** 1 (the bottom) and up; `apart` for the rooms outside the service's floors. */
  floor: number | 'apart';
}

/** `shared/{clock,ids}.ts` → `shared/clock.ts`, `shared/ids.ts`. */
const expand = (path: string): string[] => {
  const brace = /\{([^}]*)\}/.exec(path);
  if (!brace) return [path];
  return brace[1]!.split(',').flatMap((part) => expand(path.replace(brace[0], part)));
};

/** The rooms of the map between the markers of docs/design.md: lines of `<floor> <room[, room…]> <what it owns>`. */
export function houseMap(markdown: string): Room[] {
  const start = markdown.indexOf(MAP_START);
  const end = markdown.indexOf(MAP_END);
  if (start < 0 || end < start) throw new Error(`docs/design.md has no map between ${MAP_START} and ${MAP_END}`);
  const rooms: Room[] = [];
  for (const line of markdown.slice(start, end).split('\n')) {
    const row = /^\s*(\d+|apart)\s+(\S+)\s/.exec(line);
    if (!row) continue;
    const floor = row[1] === 'apart' ? 'apart' : Number(row[1]);
    for (const path of row[2]!.split(/,(?![^{]*\})/).flatMap(expand)) if (path) rooms.push({ path, floor });
  }
  return rooms;
}

/** The room a file is in: the longest path of the map that holds it. */
export function roomOf(rooms: Room[], file: string): Room | undefined {
  let best: Room | undefined;
  for (const room of rooms) {
    const holds = room.path.endsWith('/') ? file.startsWith(room.path) : file === room.path;
    if (holds && (!best || room.path.length > best.path.length)) best = room;
  }
  return best;
}

/** The most lines a file in shared/ may have (STYLE.md: "A room holds one idea"; issue 56). */
export const MAX_LINES = 600;

/**
 * The files of shared/ over MAX_LINES still to split, at the length they had when listed: each may only shrink, and the
 * list with them (test/unit/check-house.test.ts refuses a new entry or a longer length).
 */
export const LONG_PENDING: Readonly<Record<string, number>> = {};

/** A file's lines, as `wc -l` counts them (a last line without its newline counts too). */
export const linesOf = (text: string) => (text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0));

/** The findings of the bound: a file of shared/ over MAX_LINES, a listed one grown, an entry no longer needed. */
export function longFiles(root: string, files: string[], pending: Readonly<Record<string, number>> = LONG_PENDING) {
  const found: string[] = [];
  for (const file of files) {
    if (!file.startsWith('shared/')) continue;
    const lines = linesOf(readFileSync(join(root, file), 'utf8'));
    const listed = pending[file];
    if (listed === undefined && lines > MAX_LINES) {
      found.push(`${file} has ${lines} lines, over the bound of ${MAX_LINES}: split it by what it is for (STYLE.md)`);
    } else if (listed !== undefined && lines > listed) {
      found.push(
        `${file} has ${lines} lines, more than the ${listed} it is listed at in LONG_PENDING: it may only shrink`,
      );
    } else if (listed !== undefined && lines <= MAX_LINES) {
      found.push(`${file} has ${lines} lines, within the bound of ${MAX_LINES}: take it off LONG_PENDING`);
    }
  }
  for (const file of Object.keys(pending)) {
    if (!files.includes(file)) found.push(`${file} is listed in LONG_PENDING but is not there: take it off the list`);
  }
  return found;
}

const isDomain = (file: string) =>
  file.startsWith('shared/') &&
  !file.startsWith('shared/http/') &&
  !file.startsWith('shared/routes/') &&
  file !== 'shared/routes.ts';

/** Every finding, as a sentence; none: the house keeps its shape. */
export function findings(root = ROOT): string[] {
  const files = houseFiles(root);
  const edges = importEdges(root, files);
  const found: string[] = [];
  for (const circle of circles(edges)) found.push(`a circle: ${circle.join(' → ')} (each imports the next)`);
  for (const { from, to } of edges) {
    if (from.startsWith('shared/') && to.startsWith('lib/'))
      found.push(`${from} imports ${to}: shared/ never imports lib/`);
    if (isDomain(from) && to.startsWith('shared/http/'))
      found.push(`${from} imports ${to}: the domain throws shared/errors.ts's vocabulary, not HTTP problems`);
  }
  const rooms = houseMap(readFileSync(join(root, 'docs/design.md'), 'utf8'));
  for (const room of rooms) {
    if (!existsSync(join(root, room.path))) found.push(`docs/design.md's map names ${room.path}, which is not there`);
  }
  for (const file of files) {
    if (!roomOf(rooms, file)) found.push(`${file} is in no room of docs/design.md's map`);
  }
  for (const { from, to } of edges) {
    const [a, b] = [roomOf(rooms, from), roomOf(rooms, to)];
    if (!a || !b || a === b) continue;
    const climbs = a.floor === 'apart' ? b.floor !== 'apart' : b.floor === 'apart' ? a.floor < 5 : b.floor > a.floor;
    if (climbs) {
      found.push(`${from} (${a.path}, floor ${a.floor}) imports ${to} (${b.path}, floor ${b.floor}): imports run down`);
    }
  }
  found.push(...longFiles(root, files));
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const found = findings();
  for (const finding of found) console.error(finding);
  if (found.length) {
    console.error(`\nThe house's shape: ${found.length} finding(s) (docs/design.md, "The house").`);
    process.exit(1);
  }
  console.log("The house's shape holds: no circle, no climbing import, the map matches, no room over the bound.");
}
