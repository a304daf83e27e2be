/**
 * A lock file for work that two processes may start at once (test files in parallel workers, two synths): the first
 * writes its pid into the lock and does the work, the other waits for the result. A lock whose process is gone is
 * taken over. Synchronous, for code that cannot await (a construct's synthesis, a validation plugin, vitest's
 * `beforeAll` building an assembly).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';

/** Waits `ms` in synchronous code. */
export const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Takes the lock at `path` for this process: true if taken; false while another live process holds it (a lock of a
 * process that is gone is removed, so the next try takes it). Answers the holder's pid when it is not ours.
 */
export function tryLock(path: string): { taken: true } | { taken: false; holder: number } {
  try {
    writeFileSync(path, String(process.pid), { flag: 'wx' });
    return { taken: true };
  } catch {
    const holder = Number(readFileSync(path, 'utf8'));
    if (holder && !alive(holder)) rmSync(path, { force: true });
    return { taken: false, holder };
  }
}

/** Gives the lock at `path` back. */
export const unlock = (path: string) => rmSync(path, { force: true });
