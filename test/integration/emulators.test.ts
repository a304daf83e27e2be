/**
 * The local emulators die with the process that started them: a host or benchmark that crashes (an uncaught error
 * skips its `stop`) leaves no DynamoDB or S3 server behind, busy and holding its port (a crashed `npm run bench` did).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const emulators = resolve(import.meta.dirname, '../../lib/local/emulators.ts');
const tsx = resolve(import.meta.dirname, '../../node_modules/.bin/tsx');

describe('the local emulators', () => {
  it('stop when the process that started them crashes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emulators-'));
    const script = join(dir, 'crash.mts');
    writeFileSync(
      script,
      `import { startEmulators } from ${JSON.stringify(emulators)};
const started = await startEmulators({ dataDir: ${JSON.stringify(dir)}, persistent: false, buckets: ['b'], s3: true });
console.log(JSON.stringify([started.dynamodbEndpoint, started.s3Endpoint]));
throw new Error('crash on purpose');
`,
    );
    const env = { ...process.env };
    delete env['DYNAMODB_ENDPOINT'];
    delete env['S3_ENDPOINT'];
    const run = spawnSync(tsx, [script], { encoding: 'utf8', env, timeout: 60_000 });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('crash on purpose');
    const endpoints = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as string[];
    expect(endpoints).toHaveLength(2);
    for (const endpoint of endpoints) {
      // Nothing listens there any more: the connection is refused.
      const error = await fetch(endpoint, { signal: AbortSignal.timeout(2000) }).then(
        () => undefined,
        (failure: Error & { cause?: { code?: string } }) => failure.cause?.code,
      );
      expect(error, endpoint).toBe('ECONNREFUSED');
    }
  }, 90_000);
});
