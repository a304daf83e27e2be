/**
 * Issue 33.8: one connection sends 100 subscribe frames at once, each asking for 50 channels it does not hold. Prints
 * the DynamoDB calls the frames cost, the answers by kind, and the time from the first frame sent to the last answer.
 * Run: `npx tsx bench/subscribe-flood.ts`.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { db } from '#shared/db/client';
import { BENCH_ADMIN, startBenchHost, stopBenchHost } from './host.ts';

const FRAMES = 100;
const CHANNELS = 50;

const host = await startBenchHost('subscribe-flood');
const login = (await (
  await fetch(`${host.url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user: { email: BENCH_ADMIN.email, password: BENCH_ADMIN.password } }),
  })
).json()) as { bearer_token: string };
const socket = new WebSocket(`${host.url.replace('http', 'ws')}/ws?token=${login.bearer_token}`);
await new Promise((resolve) => socket.once('open', resolve));
const answers: { type: string; code?: string }[] = [];
let lastAnswer = 0;
socket.on('message', (data) => {
  answers.push(JSON.parse(data.toString()) as { type: string; code?: string });
  lastAnswer = performance.now();
});

let calls = 0;
db().middlewareStack.add(
  (next) => (args) => {
    calls++;
    return next(args);
  },
  { step: 'initialize', name: 'count-calls' },
);
const started = performance.now();
for (let i = 0; i < FRAMES; i++) {
  const channels = Array.from({ length: CHANNELS }, () => `planning.${randomUUID()}`);
  socket.send(JSON.stringify({ action: 'subscribe', channels }));
}
// Done when no answer came for three seconds (every frame gets at least one).
while (answers.length < FRAMES || performance.now() - lastAnswer < 3000) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}
const elapsed = lastAnswer - started;
const kinds = new Map<string, number>();
for (const a of answers) kinds.set(a.code ?? a.type, (kinds.get(a.code ?? a.type) ?? 0) + 1);
console.log(`${FRAMES} subscribe frames × ${CHANNELS} new channels (SysAdmin, one connection)`);
console.log(`DynamoDB calls: ${calls} (${(calls / FRAMES).toFixed(1)} a frame)`);
console.log(`answers: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`);
console.log(`first frame sent → last answer: ${(elapsed / 1000).toFixed(2)} s`);
await new Promise((resolve) => {
  socket.once('close', resolve);
  socket.close();
});
// $disconnect runs after the close: let it finish before the emulator stops.
await new Promise((resolve) => setTimeout(resolve, 1000));
await stopBenchHost();
