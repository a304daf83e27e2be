/**
 * The front door on every developer's machine (issue 24.1): what `npm ci` installs must not depend on the platform
 * beyond optional packages, no package may link a `node` into node_modules/.bin (npm scripts put it first on PATH),
 * and the browser tests find a browser or say what to install. `.ci/platforms` runs `npm ci` as each platform would.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCKFILE, nodeBins } from '../../bin/tidy-lock.ts';
import { LAMBDA_NODE_PACKAGES, lambdaNode } from '../bundles/lambda-node.ts';
import { chromiumPath, SYSTEM_BROWSERS } from '../support/browser.ts';

type Entry = {
  os?: string[] | string;
  cpu?: string[] | string;
  optional?: boolean;
  dev?: boolean;
  bin?: Record<string, string>;
};
const lock = JSON.parse(readFileSync(LOCKFILE, 'utf8')) as { packages: Record<string, Entry> };
const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'));

describe('npm ci on every platform', () => {
  it('links no node into node_modules/.bin (npm run lock:tidy removes it after an npm install)', () => {
    expect(nodeBins(lock)).toEqual([]);
  });

  it('installs a platform-bound package only as an optional dependency', () => {
    const bound = Object.entries(lock.packages).filter(
      ([path, e]) => path && (e.os !== undefined || e.cpu !== undefined),
    );
    expect(bound.length).toBeGreaterThan(0);
    expect(bound.filter(([, e]) => !e.optional).map(([path]) => path)).toEqual([]);
  });

  it("has Lambda's Node for each platform as an optional dependency that fits it", () => {
    for (const [platform, name] of Object.entries(LAMBDA_NODE_PACKAGES)) {
      const [os, cpu] = platform.split('-');
      const entry = lock.packages[`node_modules/${name}`]!;
      expect(pkg.optionalDependencies[name], name).toMatch(/^24\./);
      expect([entry.os].flat(), name).toEqual([os]);
      expect([entry.cpu].flat(), name).toEqual([cpu]);
    }
  });

  it("says plainly when the bundles cannot run on Lambda's Node here", () => {
    const fallback = lambdaNode('sunos-x64');
    expect(fallback).toMatchObject({ path: process.execPath, lambdaMajor: false });
    expect(fallback.source).toContain(`the test runner's Node ${process.version}`);
  });
});

describe('the browser for the browser tests', () => {
  it('is a system Chrome, Chromium or Edge at the usual place where the npm-shipped one does not run', async () => {
    const chrome = SYSTEM_BROWSERS['darwin']![0]!;
    const chromium = SYSTEM_BROWSERS['linux']![0]!;
    const saved = process.env['CHROMIUM'];
    delete process.env['CHROMIUM'];
    try {
      expect(await chromiumPath('darwin', 'arm64', (p) => p === chrome)).toEqual({ path: chrome });
      expect(await chromiumPath('linux', 'arm64', (p) => p === chromium)).toEqual({ path: chromium });
      const none = await chromiumPath('darwin', 'arm64', () => false);
      expect('missing' in none && none.missing).toMatch(/install Google Chrome .*or set CHROMIUM/);
    } finally {
      if (saved !== undefined) process.env['CHROMIUM'] = saved;
    }
  });
});
