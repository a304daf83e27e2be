/**
 * The console's one script: lib/ops/console/*.ts bundled by esbuild into the file `/ops/assets/app.js` serves
 * (`OPS_ASSETS` in shared/ops/page.ts names where it is). Made when the local host starts (`npm start`, the tests'
 * hosts) and when CDK bundles the `/ops` function (its afterBundling hook copies it into the bundle's `ops-assets/`).
 * One self-contained script, no inline code: the page's Content-Security-Policy (`script-src 'self'`) holds.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildSync } from 'esbuild';
import { ROOT } from '#lib/paths';
import { OPS_ASSETS } from '#shared/ops/page';

export const CONSOLE_ENTRY = 'lib/ops/console/main.ts';
/** The tracking page's script (shared/tracking/page.ts), served as `/ops/assets/track.js`. */
export const TRACKING_ENTRY = 'lib/ops/console/track.ts';

const BANNER = `/* The dispatcher's console (/ops): bundled from ${dirname(CONSOLE_ENTRY)}/ by lib/ops/build.ts; edit those. */`;

/** The bundle's text (the console's, or another entry's). */
export function bundleConsole(root = ROOT, entry = CONSOLE_ENTRY): string {
  const result = buildSync({
    entryPoints: [join(root, entry)],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    charset: 'utf8',
    legalComments: 'none',
    banner: { js: BANNER },
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild made nothing of ${entry}`);
  return output.text;
}

/**
 * Writes the bundles where `/ops/assets/app.js` and `track.js` are read from (under `root`) and returns the console's
 * path. Each written whole and renamed into place: hosts starting side by side (the tests') never serve half a file.
 */
export function buildConsole(root = ROOT): string {
  const write = (asset: 'app.js' | 'track.js', entry: string) => {
    const target = join(root, OPS_ASSETS[asset].source);
    mkdirSync(dirname(target), { recursive: true });
    const partial = `${target}.${process.pid}.${Date.now()}`;
    writeFileSync(partial, bundleConsole(root, entry));
    renameSync(partial, target);
    return target;
  };
  write('track.js', TRACKING_ENTRY);
  return write('app.js', CONSOLE_ENTRY);
}
