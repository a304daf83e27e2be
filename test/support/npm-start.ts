/**
 * `npm start -- --fresh` as a newcomer or an operator runs it: its own process group, ports and data folder, its own
 * emulators (not the test run's), ready when `/health` answers. `stop()` ends it as Ctrl-C in a terminal would, and
 * removes the data folder.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../lib/local/emulators.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** `env` is added to the environment (the seeded SysAdmin, OPS_TILE_URL, …); `unset` names what to leave out. */
export async function npmStart(options: { env?: Record<string, string>; unset?: string[]; name?: string } = {}) {
  const [port, s3Port] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), `${options.name ?? 'npm-start'}-`));
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), S3_PORT: String(s3Port) };
  for (const key of ['DYNAMODB_ENDPOINT', 'S3_ENDPOINT', ...(options.unset ?? [])]) delete env[key];
  Object.assign(env, { DISPATCH_DATA_DIR: dataDir }, options.env);
  let service: ChildProcess;
  /** Ends the process group as Ctrl-C in a terminal would (SIGKILL after 10 s). */
  const end = async () => {
    if (service.pid) {
      const ended = new Promise((done) => service.once('exit', done));
      // The whole group (npm, its shell, the host): Ctrl-C as a terminal sends it.
      process.kill(-service.pid, 'SIGINT');
      await Promise.race([ended, new Promise((r) => setTimeout(r, 10_000))]);
      try {
        process.kill(-service.pid, 'SIGKILL');
      } catch {
        // gone already, as it should be
      }
    }
  };
  const stop = async () => {
    await end();
    rmSync(dataDir, { recursive: true, force: true });
  };
  /** `npm start` (with `--fresh` the first time), ready once `/health` answers. */
  const launch = async (fresh: boolean) => {
    service = spawn('npm', ['start', ...(fresh ? ['--', '--fresh'] : [])], {
      cwd: ROOT,
      env,
      stdio: 'ignore',
      detached: true,
    });
    const deadline = Date.now() + 90_000;
    for (;;) {
      const health = await fetch(`${url}/health`).catch(() => undefined);
      if (health?.ok) break;
      if (Date.now() > deadline) {
        await stop();
        throw new Error('npm start did not answer /health within 90 s');
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  await launch(true);
  /** Ctrl-C, then `npm start` again on the same ports and data folder (no `--fresh`). */
  const restart = async () => {
    await end();
    await launch(false);
  };
  return { url, stop, restart };
}
