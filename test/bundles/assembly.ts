/**
 * The cloud assembly as `cdk deploy` would upload it: every function bundled by CDK's own NodejsFunction (esbuild
 * with the stacks' options). Bundling ~120 functions takes most of a minute, so the assembly is kept under
 * node_modules/.cache, keyed by a hash of everything that goes into it, and made again only when that changes.
 * It lives inside the project so that a bundle's imports of the SDK clients the Lambda runtime provides (left
 * external) resolve to the project's copies, as they resolve to the runtime's in Lambda.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { buildApp } from '../../lib/app.ts';
import { pause, tryLock, unlock } from '../../lib/file-lock.ts';
import { ROOT } from '../../lib/paths.ts';
import { ACCOUNT } from '../support/aws-calls.ts';

const INPUTS = ['functions', 'shared', 'lib', 'bin/app.ts', 'package-lock.json', 'cdk.json'];

function sourceHash(): string {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    const path = join(ROOT, input);
    const files = statSync(path).isDirectory()
      ? readdirSync(path, { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile())
          .map((entry) => join(entry.parentPath, entry.name))
          .sort()
      : [path];
    for (const file of files) {
      hash.update(file.slice(ROOT.length));
      hash.update(readFileSync(file));
    }
  }
  return hash.digest('hex').slice(0, 16);
}

export const STACK_PROPS = { env: { account: ACCOUNT, region: 'us-east-1' } };
export const CONTEXT = { '@aws-cdk/core:defaultCrossStackReferences': 'strong' };

/**
 * CDK runs esbuild as `npx --no-install esbuild …`, once for each function (its npm package manager's way): npx
 * costs about 0.4 s of CPU a call, a minute for the service's ~150 functions. While `build` runs, that one call is
 * answered by the binary npx would run (node_modules/.bin/esbuild) with the same arguments, so the bundles are the
 * same bytes; any other npx call goes to npm's own.
 */
function withDirectEsbuild<T>(build: () => T): T {
  const npx = execFileSync('sh', ['-c', 'command -v npx'], { encoding: 'utf8' }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'esbuild-direct-'));
  const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
  writeFileSync(
    join(dir, 'npx'),
    [
      '#!/bin/sh',
      'if [ "$1" = "--no-install" ] && [ "$2" = "esbuild" ]; then',
      '  shift 2',
      `  exec ${quote(join(ROOT, 'node_modules', '.bin', 'esbuild'))} "$@"`,
      'fi',
      `exec ${quote(npx)} "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const path = process.env['PATH'];
  process.env['PATH'] = `${dir}:${path ?? ''}`;
  try {
    return build();
  } finally {
    process.env['PATH'] = path;
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The directory of a synthesized, bundled assembly of the current sources (made if missing). Test files in parallel
 * workers share it: the first takes a lock file and builds, the others wait for its manifest (or take over a lock
 * whose process is gone); older assemblies are removed, never one another process is building.
 */
export function cloudAssembly(): { outdir: string; reused: boolean } {
  const cache = join(ROOT, 'node_modules', '.cache', 'dispatch-assembly');
  const hash = sourceHash();
  const outdir = join(cache, hash);
  const manifest = join(outdir, 'manifest.json');
  const lock = `${outdir}.lock`;
  mkdirSync(cache, { recursive: true });
  for (let waited = 0; !existsSync(manifest); waited += 1000) {
    const locked = tryLock(lock);
    if (!locked.taken) {
      if (waited > 20 * 60_000) throw new Error(`gave up waiting for process ${locked.holder} to build the assembly`);
      pause(1000);
      continue;
    }
    try {
      if (existsSync(manifest)) break;
      for (const entry of readdirSync(cache)) {
        if (!entry.startsWith(hash)) rmSync(join(cache, entry), { recursive: true, force: true });
      }
      const building = `${outdir}.building-${process.pid}`;
      const app = new App({ outdir: building, context: CONTEXT });
      withDirectEsbuild(() => {
        buildApp(app, STACK_PROPS);
        app.synth();
      });
      renameSync(building, outdir);
      return { outdir, reused: false };
    } finally {
      unlock(lock);
    }
  }
  return { outdir, reused: true };
}

/** The same app, built without bundling: only for its construct tree (which function is which handler). */
export function constructTree() {
  const app = new App({
    outdir: join(ROOT, 'node_modules', '.cache', `tree-${process.pid}`),
    context: { ...CONTEXT, 'aws:cdk:bundling-stacks': [] },
  });
  return { app, built: buildApp(app, STACK_PROPS) };
}
