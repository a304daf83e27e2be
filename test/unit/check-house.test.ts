/**
 * Issue 44.2 and 44.6: `npm run lint`'s check of the house (bin/check-house.ts) finds nothing in the house as it is,
 * and finds what it is for: a circle, an import from shared/ into lib/, a domain file speaking HTTP, a climbing
 * import, a file in no room of docs/design.md's map; issue 56.2: a file of shared/ over the bound of lines.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { circles, findings, LONG_PENDING, linesOf, longFiles, MAX_LINES } from '../../bin/check-house.ts';

describe("the house's shape", () => {
  it('holds: no circle, no climbing import, every file in a room of the map', () => {
    expect(findings()).toEqual([]);
  });

  it('finds a circle of three', () => {
    const edges = [
      { from: 'a.ts', to: 'b.ts' },
      { from: 'b.ts', to: 'c.ts' },
      { from: 'c.ts', to: 'a.ts' },
      { from: 'c.ts', to: 'd.ts' },
    ];
    expect(circles(edges)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('fails a copy of the house given a circle, shared/ importing lib/, the domain speaking HTTP and an unmapped room', () => {
    const root = mkdtempSync(join(tmpdir(), 'house-'));
    for (const top of ['bin', 'lib', 'functions', 'shared', 'docs']) cpSync(top, join(root, top), { recursive: true });
    writeFileSync(join(root, 'shared/ids.ts'), "import { clock } from '#shared/clock';\nexport const x = clock;\n");
    writeFileSync(join(root, 'shared/clock.ts'), "import { x } from '#shared/ids';\nexport const clock = x;\n");
    writeFileSync(join(root, 'shared/log.ts'), "import { ROOT } from '#lib/paths';\nexport const log = ROOT;\n");
    writeFileSync(join(root, 'shared/workers/new.ts'), "import { notFound } from '#shared/http/problems';\n");
    writeFileSync(join(root, 'shared/attic.ts'), 'export {};\n');
    const found = findings(root).join('\n');
    expect(found).toContain('a circle: shared/clock.ts → shared/ids.ts');
    expect(found).toContain('shared/log.ts imports lib/paths.ts: shared/ never imports lib/');
    expect(found).toContain(
      "shared/workers/new.ts imports shared/http/problems.ts: the domain throws shared/errors.ts's",
    );
    expect(found).toContain(
      'shared/log.ts (shared/log.ts, floor 1) imports lib/paths.ts (lib/, floor 5): imports run down',
    );
    expect(found).toContain("shared/attic.ts is in no room of docs/design.md's map");
  });

  describe('the bound of a room (issue 56.2)', () => {
    it('lists only files that were over it when the bound came, at no more than their length then', () => {
      // The list may only shrink: a new entry, or a longer length, fails here.
      const then: Record<string, number> = { 'shared/imports/csv.ts': 652, 'shared/planning/plannings.ts': 719 };
      for (const [file, lines] of Object.entries(LONG_PENDING)) {
        expect(then[file], `${file} was not over the bound when it came`).toBeDefined();
        expect(lines).toBeLessThanOrEqual(then[file]!);
        expect(lines).toBeGreaterThan(MAX_LINES);
      }
      // A file taken off the list is within the bound now (split, not moved aside).
      for (const file of Object.keys(then).filter((file) => LONG_PENDING[file] === undefined))
        expect(linesOf(readFileSync(file, 'utf8')), `${file} was taken off the list`).toBeLessThanOrEqual(MAX_LINES);
    });

    it('counts lines as wc -l does', () => {
      expect(linesOf('a\nb\n')).toBe(2);
      expect(linesOf('a\nb')).toBe(2);
      expect(linesOf('')).toBe(0);
    });

    it('fails a copy of the house given a long new file, a listed file grown and a listed file split', () => {
      const root = mkdtempSync(join(tmpdir(), 'house-'));
      for (const top of ['bin', 'lib', 'functions', 'shared', 'docs'])
        cpSync(top, join(root, top), { recursive: true });
      writeFileSync(join(root, 'shared/workers/long.ts'), 'export const x = 1;\n'.repeat(MAX_LINES + 1));
      writeFileSync(join(root, 'shared/workers/at-bound.ts'), 'export const y = 1;\n'.repeat(MAX_LINES));
      // A pending list of the copy's own (the house's may be empty): one file listed and grown, one listed and split.
      const [grown, split] = ['shared/workers/grown.ts', 'shared/workers/split.ts'];
      const pending = { [grown]: MAX_LINES + 50, [split]: MAX_LINES + 50 };
      writeFileSync(join(root, grown), 'export const z = 1;\n'.repeat(MAX_LINES + 51));
      writeFileSync(join(root, split), 'export {};\n');
      const found = longFiles(root, ['shared/workers/long.ts', 'shared/workers/at-bound.ts', grown, split], pending);
      expect(found).toEqual([
        `shared/workers/long.ts has ${MAX_LINES + 1} lines, over the bound of ${MAX_LINES}: split it by what it is for (STYLE.md)`,
        `${grown} has ${MAX_LINES + 51} lines, more than the ${MAX_LINES + 50} it is listed at in LONG_PENDING: it may only shrink`,
        `${split} has 1 lines, within the bound of ${MAX_LINES}: take it off LONG_PENDING`,
      ]);
      expect(findings(root).join('\n')).toContain('shared/workers/long.ts has 601 lines, over the bound of 600');
    });
  });
});
