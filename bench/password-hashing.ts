/**
 * A1's password check (argon2id, shared/auth/passwords.ts) under a crowd (issue 55 item 10): hash-wasm computes in
 * WebAssembly on the calling thread, so in one process (the local host, `npm start`) concurrent sign-ins take turns.
 * Prints one verification's time, then what the last of 12 drivers' sign-ins and a dispatcher's 13th wait when they
 * all arrive at once, and how long the event loop is held meanwhile (a timer due at once fires after them all). `npx tsx bench/password-hashing.ts`
 */
import { performance } from 'node:perf_hooks';
import { hashPassword, verifyPassword } from '#shared/auth/passwords';

const hash = await hashPassword('a-good-long-password');
for (let i = 0; i < 3; i++) await verifyPassword('a-good-long-password', hash); // warm the WebAssembly
const one = performance.now();
await verifyPassword('a-good-long-password', hash);
const single = performance.now() - one;

// A timer due at once when the crowd arrives: when it fires says how long the event loop was held (no other request,
// no WebSocket frame is served meanwhile).
const start = performance.now();
const timer = new Promise<number>((fired) => setTimeout(() => fired(performance.now() - start), 0));
const done: number[] = [];
await Promise.all(
  Array.from({ length: 13 }, async () => {
    await verifyPassword('a-good-long-password', hash);
    done.push(performance.now() - start);
  }),
);
const held = await timer;
console.log(
  JSON.stringify({
    one_verification_ms: Math.round(single),
    crowd_of_13_first_done_ms: Math.round(done[0]!),
    crowd_of_13_last_done_ms: Math.round(done.at(-1)!),
    a_timer_due_at_once_fired_after_ms: Math.round(held),
  }),
);
