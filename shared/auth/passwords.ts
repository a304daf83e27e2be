/**
 * Passwords: argon2id at OWASP's recommended minimum (19 MiB memory, 2 iterations, parallelism 1), in the PHC string
 * format. hash-wasm is pure WebAssembly, so it bundles into every function without a native build for Lambda.
 *
 * It computes on the calling thread (about 70-130 ms a hash on this repository's 2-core machines). In the cloud each
 * sign-in is its own Lambda invocation; in one process (the local host, `npm start`) concurrent hashes used to run
 * back to back in microtasks, holding the event loop for all of them and finishing all at once: 12 drivers signing in
 * together made every one of them, and a dispatcher's sign-in among them, wait for the whole crowd (issue 55 item 10;
 * `bench/password-hashing.ts`). So hashes take turns, one at a time, each after a turn of the event loop: the first
 * sign-in of a crowd ends after one hash, the n-th after n, and other requests and WebSocket frames are served between.
 */
import { randomBytes } from 'node:crypto';
import { argon2id, argon2Verify } from 'hash-wasm';

const PARAMS = { memorySize: 19_456, iterations: 2, parallelism: 1, hashLength: 32 } as const;

/** The hashes waiting or running, in arrival order: each starts after the one before it and a turn of the event loop. */
let turns: Promise<unknown> = Promise.resolve();
function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const run = turns.then(() => new Promise((next) => setImmediate(next))).then(work);
  turns = run.catch(() => undefined);
  return run;
}

export function hashPassword(password: string): Promise<string> {
  return inTurn(() => argon2id({ password, salt: randomBytes(16), ...PARAMS, outputType: 'encoded' }));
}

export async function verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
  if (!hash) {
    // Spend the same time for an unknown account as for a wrong password: no timing oracle on emails.
    await inTurn(() => argon2id({ password, salt: DUMMY_SALT, ...PARAMS, outputType: 'hex' }));
    return false;
  }
  try {
    return await inTurn(() => argon2Verify({ password, hash }));
  } catch {
    return false;
  }
}

const DUMMY_SALT = randomBytes(16);
