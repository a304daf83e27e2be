/**
 * The local emulators die with the process that started them: a host or benchmark that crashes (an uncaught error
 * skips its `stop`) leaves no DynamoDB or S3 server behind, busy and holding its port (a crashed `npm run bench` did).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const emulators = resolve(import.meta.dirname, '../../lib/local/emulators.ts');
const tsx = resolve(import.meta.dirname, '../../node_modules/.bin/tsx');

/** Nothing listens at `endpoint` any more: the connection is refused. */
const refused = (endpoint: string) =>
  fetch(endpoint, { signal: AbortSignal.timeout(2000) }).then(
    () => undefined,
    (failure: Error & { cause?: { code?: string } }) => failure.cause?.code,
  );

/**
 * What `refused` answers once the emulators had their moment to stop: a child signalled as its owner exits is gone a
 * few hundred milliseconds later on a loaded machine, not at the owner's exit (asked again for up to 15 s).
 */
async function refusedSoon(endpoint: string): Promise<string | undefined> {
  const until = Date.now() + 15_000;
  for (;;) {
    const code = await refused(endpoint);
    if (code === 'ECONNREFUSED' || Date.now() > until) return code;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A script that starts both emulators, prints their endpoints and then does `then`. */
function script(then: string): { path: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), 'emulators-'));
  const path = join(dir, 'owner.mts');
  writeFileSync(
    path,
    `import { startEmulators } from ${JSON.stringify(emulators)};
const started = await startEmulators({ dataDir: ${JSON.stringify(dir)}, persistent: false, buckets: ['b'], s3: true });
console.log(JSON.stringify([started.dynamodbEndpoint, started.s3Endpoint]));
${then}
`,
  );
  const env = { ...process.env };
  delete env['DYNAMODB_ENDPOINT'];
  delete env['S3_ENDPOINT'];
  return { path, env };
}

describe('the local emulators', () => {
  it('stop when the process that started them crashes', async () => {
    const { path, env } = script("throw new Error('crash on purpose');");
    const run = spawnSync(tsx, [path], { encoding: 'utf8', env, timeout: 60_000 });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('crash on purpose');
    const endpoints = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as string[];
    expect(endpoints).toHaveLength(2);
    for (const endpoint of endpoints) expect(await refusedSoon(endpoint), endpoint).toBe('ECONNREFUSED');
  }, 90_000);

  it('stop when the process that started them is terminated (SIGTERM: a CI timeout)', async () => {
    const { owner, endpoints } = await running(script('setInterval(() => {}, 1000);'));
    for (const endpoint of endpoints) expect(await refused(endpoint), endpoint).toBeUndefined();
    const ended = exit(owner);
    owner.kill('SIGTERM');
    expect((await ended).code).toBe(143);
    for (const endpoint of endpoints) expect(await refusedSoon(endpoint), endpoint).toBe('ECONNREFUSED');
  }, 90_000);

  it('leave a SIGTERM to the owner’s own handler registered after them (npm start’s graceful stop)', async () => {
    const { owner, endpoints } = await running(
      script(`process.on('SIGTERM', async () => {
  await started.stop();
  console.log('stopped gracefully');
  process.exit(0);
});
setInterval(() => {}, 1000);`),
    );
    const ended = exit(owner);
    owner.kill('SIGTERM');
    const { code, output } = await ended;
    expect(output).toContain('stopped gracefully');
    expect(code).toBe(0);
    for (const endpoint of endpoints) expect(await refusedSoon(endpoint), endpoint).toBe('ECONNREFUSED');
  }, 90_000);
});

/** The owner script run by Node itself (tsx's loader in-process, so that a signal reaches it), once it has started. */
async function running({ path, env }: { path: string; env: NodeJS.ProcessEnv }) {
  const owner = spawn(process.execPath, ['--import', 'tsx', path], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  owner.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const endpoints = await new Promise<string[]>((done, fail) => {
    owner.stdout.on('data', () => {
      if (output.includes('\n')) done(JSON.parse(output.split('\n')[0]!) as string[]);
    });
    owner.once('exit', () => fail(new Error('the owner exited before starting the emulators')));
  });
  return { owner: Object.assign(owner, { output: () => output }), endpoints };
}

/** The owner's exit code and everything it printed. */
const exit = (owner: ChildProcess & { output: () => string }) =>
  new Promise<{ code: number | null; output: string }>((done) =>
    owner.once('exit', (code) => done({ code, output: owner.output() })),
  );
