/** A fresh in-memory local host for one benchmark, with its own tables and a seeded SysAdmin. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startLocal } from '#lib/local/start';

export const BENCH_ADMIN = { email: 'bench@dispatch.local', password: 'bench-password-123' };

let shared: ReturnType<typeof startLocal> | undefined;

/**
 * One host for the whole run: the functions' clients are created once per process (as in a Lambda container), so a
 * second host in the same process would find them pointed at the first one's emulators.
 */
export function startBenchHost(name: string) {
  shared ??= startLocal({
    port: 0,
    dataDir: mkdtempSync(join(tmpdir(), `dispatch-bench-${name}-`)),
    fresh: true,
    persistent: false,
    adminEmail: BENCH_ADMIN.email,
    adminPassword: BENCH_ADMIN.password,
    tablePrefix: `bench-${name}-`,
  });
  return shared;
}

export async function stopBenchHost() {
  await (await shared)?.stop();
  shared = undefined;
}

/** A WebSocket to the bench host, signed in with `token` and subscribed to `channel` (its acknowledgement read). */
export async function subscribedSocket(hostUrl: string, token: string, channel: string): Promise<WebSocket> {
  const socket = new WebSocket(`${hostUrl.replace('http', 'ws')}/ws?token=${token}`);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const subscribed = new Promise<void>((resolve) => socket.once('message', () => resolve()));
  socket.send(JSON.stringify({ action: 'subscribe', channels: [channel] }));
  await subscribed;
  return socket;
}
