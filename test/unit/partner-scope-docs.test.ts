/**
 * docs/accounts.md's partner scope table against the route table (issue 55 item 5): every operation a partner scope
 * opens (`scopes` in shared/routes/*.ts) is named in that scope's row, ranges such as `P1–P9` included.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RouteDef } from '../../shared/routes/types.ts';
import { routes } from '../../shared/routes.ts';

const DOC = readFileSync(resolve(import.meta.dirname, '../../docs/accounts.md'), 'utf8');

/** The ids a row's "opens" cell names: `A9`, `I4b`, and each id of a range `P1–P9`. */
function named(cell: string): Set<string> {
  const ids = new Set<string>();
  for (const [, letter, from, to] of cell.matchAll(/\b([A-Z])(\d+)[–-]\1?(\d+)\b/g)) {
    for (let n = Number(from); n <= Number(to); n++) ids.add(`${letter}${n}`);
  }
  for (const [id] of cell.matchAll(/\b[A-Z]\d+[a-z]?\b/g)) ids.add(id);
  return ids;
}

describe("docs/accounts.md's partner scope table", () => {
  const rows = new Map(
    [...DOC.matchAll(/^\| `([a-z:]+)` \| ([^|]+) \|/gm)].map(([, scope, opens]) => [scope!, named(opens!)]),
  );

  it('names every operation each scope opens', () => {
    const missing: string[] = [];
    for (const route of routes as readonly RouteDef[]) {
      for (const scope of route.scopes ?? []) {
        if (!rows.get(scope)?.has(route.id)) missing.push(`${route.id} under ${scope}`);
      }
    }
    expect(rows.size).toBe(4);
    expect(missing).toEqual([]);
  });
});
