/**
 * `npm ci`'s install scripts reviewed (issue 55 item 9): every package of the lockfile that has one is named in
 * package.json's `allowScripts` (npm 11: `true` runs it, `false` denies it), so npm 11 prints no `install-scripts`
 * warning; @scarf/scarf's install analytics are off (`scarfSettings`), whatever npm's version.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (file: string) => JSON.parse(readFileSync(resolve(ROOT, file), 'utf8'));

describe("npm ci's install scripts", () => {
  it('each one in the lockfile is reviewed in package.json’s allowScripts', () => {
    const lock = read('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
    const manifest = read('package.json') as { allowScripts?: Record<string, boolean>; scarfSettings?: unknown };
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.length).toBeGreaterThan(0);
    expect(withScripts.filter((name) => typeof manifest.allowScripts?.[name] !== 'boolean')).toEqual([]);
    expect(manifest.scarfSettings).toEqual({ enabled: false });
  });
});
