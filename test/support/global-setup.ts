/**
 * Starts one DynamoDB emulator (in memory) and one S3 emulator for the whole run; every test file then makes its
 * own tables under a fresh prefix, so files never see each other's records. With `DYNAMODB_LATENCY_MS` (in the
 * environment of the run, or of the project: the `latency` project of vitest.config.ts) the files are handed the
 * address of a latency proxy in front of the DynamoDB emulator (test/support/latency-proxy.ts), not the emulator's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { CAPACITY_DIR } from '../../bench/tallies.ts';
import { startEmulators } from '../../lib/local/emulators.ts';
import { UPLOAD_BUCKET } from '../../lib/local/start.ts';
import { buildConsole } from '../../lib/ops/build.ts';
import { RECORD_DIR } from './aws-calls.ts';
import { chromiumPath } from './browser.ts';
import { parseLatency, startLatencyProxy } from './latency-proxy.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    endpoints: { dynamodb: string; s3: string };
    dataDir: string;
    chromium: { path: string } | { missing: string };
  }
}

export default async function setup(project: TestProject) {
  const latency = parseLatency(process.env['DYNAMODB_LATENCY_MS'] ?? project.config.env?.['DYNAMODB_LATENCY_MS']);
  // The AWS calls of this run only (test/support/record-setup.ts writes them, test/proof/iam.test.ts reads them). The
  // latency project runs files the other project runs too, and records nothing: it must not wipe what that records.
  if (project.name !== 'latency') {
    rmSync(RECORD_DIR, { recursive: true, force: true });
    rmSync(CAPACITY_DIR, { recursive: true, force: true });
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'dispatch-test-'));
  const emulators = await startEmulators({ dataDir, persistent: false, buckets: [UPLOAD_BUCKET] });
  const proxy = latency && (await startLatencyProxy(emulators.dynamodbEndpoint, latency));
  project.provide('endpoints', { dynamodb: proxy ? proxy.url : emulators.dynamodbEndpoint, s3: emulators.s3Endpoint });
  project.provide('dataDir', dataDir);
  // The /ops console's script, for the files that read it without starting a host (each host makes it again).
  buildConsole();
  // Unpacked once here, before any file runs, so that browser tests never race to unpack it.
  project.provide('chromium', await chromiumPath());
  return async () => {
    if (proxy) await proxy.close();
    await emulators.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
