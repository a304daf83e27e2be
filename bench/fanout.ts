/** One N1 event fanned out to 1 000 WebSocket connections on the local host: delivery time p50/p99. */
import WebSocket from 'ws';
import { gateway } from '#lib/local/websocket';
import { BENCH_ADMIN, startBenchHost } from './host.ts';

const CONNECTIONS = 1000;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

export async function benchFanOut() {
  const host = await startBenchHost('fanout');
  const login = (await (
    await fetch(`${host.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: BENCH_ADMIN }),
    })
  ).json()) as { bearer_token: string; user: { id: string } };
  const channel = `user.${login.user.id}`;
  const arrivals: number[] = [];
  let sentAt = 0;
  const sockets: WebSocket[] = [];
  const opened = performance.now();
  for (let i = 0; i < CONNECTIONS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, CONNECTIONS - i) }, async () => {
        const socket = new WebSocket(`${host.url.replace('http', 'ws')}/ws?token=${login.bearer_token}`);
        await new Promise((resolve, reject) => {
          socket.once('open', resolve);
          socket.once('error', reject);
        });
        const subscribed = new Promise<void>((resolve) => {
          socket.once('message', () => resolve());
        });
        socket.send(JSON.stringify({ action: 'subscribe', channels: [channel] }));
        await subscribed;
        socket.on('message', (data) => {
          if (JSON.parse(data.toString()).type === 'event') arrivals.push(performance.now() - sentAt);
        });
        sockets.push(socket);
      }),
    );
  }
  const setup = performance.now() - opened;
  const rounds: { p50: number; p99: number; total: number }[] = [];
  for (let round = 0; round < 3; round++) {
    arrivals.length = 0;
    sentAt = performance.now();
    const response = await fetch(`${host.url}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${login.bearer_token}` },
      body: JSON.stringify({ events: [{ channel, name: 'bench', data: { round } }] }),
    });
    const total = performance.now() - sentAt;
    const answer = (await response.json()) as { delivered: number };
    const deadline = Date.now() + 10_000;
    while (arrivals.length < CONNECTIONS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (answer.delivered !== CONNECTIONS || arrivals.length !== CONNECTIONS) {
      throw new Error(`delivered ${answer.delivered}, arrived ${arrivals.length} of ${CONNECTIONS}`);
    }
    rounds.push({ p50: percentile(arrivals, 50), p99: percentile(arrivals, 99), total });
  }
  console.log(
    `\n## N1 fan-out to ${CONNECTIONS} WebSocket connections (connected and subscribed in ${(setup / 1000).toFixed(1)} s)`,
  );
  for (const [i, r] of rounds.entries()) {
    console.log(
      `round ${i + 1}: delivery p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  N1 answered after ${r.total.toFixed(1)} ms`,
    );
  }
  for (const socket of sockets) socket.close();
  // Let the $disconnect handlers finish before the host (and its emulators) stop.
  await new Promise((resolve) => setTimeout(resolve, 200));
  await gateway.idle();
}
