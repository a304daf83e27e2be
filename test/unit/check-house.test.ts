/**
 * Issue 44.2 and 44.6: `npm run lint`'s check of the house (bin/check-house.ts) finds nothing in the house as it is,
 * and finds what it is for: a circle, an import from shared/ into lib/, a domain file speaking HTTP, a climbing
 * import, a file in no room of docs/design.md's map.
 */
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { circles, findings } from '../../bin/check-house.ts';

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
});
