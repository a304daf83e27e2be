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

const BANNER = `/* The dispatcher's console (/ops): bundled from ${dirname(CONSOLE_ENTRY)}/ by lib/ops/build.ts; edit those. */`;

/** The bundle's text. */
export function bundleConsole(root = ROOT): string {
  const result = buildSync({
    entryPoints: [join(root, CONSOLE_ENTRY)],
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
  if (!output) throw new Error(`esbuild made nothing of ${CONSOLE_ENTRY}`);
  return output.text;
}

/**
 * Writes the bundle where `/ops/assets/app.js` is read from (under `root`) and returns that path. Written whole and
 * renamed into place: hosts starting side by side (the tests') never serve half a file.
 */
export function buildConsole(root = ROOT): string {
  const target = join(root, OPS_ASSETS['app.js'].source);
  mkdirSync(dirname(target), { recursive: true });
  const partial = `${target}.${process.pid}.${Date.now()}`;
  writeFileSync(partial, bundleConsole(root));
  renameSync(partial, target);
  return target;
}
