/**
 * Live positions under load: 1 000 drivers of one organisation each sending a fix a second, 50 dispatchers watching
 * `org.<id>` over WebSocket. The fixes are written in batches (storeFixes, the bulk path: L1 itself is measured by
 * the locations benchmark and the load script); the fan-out is the real one: the emulator's stream, the host's
 * poller, the stream handler, PostToConnection. Prints frames per subscriber per second, drivers per frame and the
 * delivery lag (from the fix's server_time, stamped before its batch is written, to its arrival at a subscriber)
 * p50/p99. Bounded: SECONDS of writing, then 3 s for the last deliveries.
 */
import { randomUUID } from 'node:crypto';
import type WebSocket from 'ws';
import { gateway } from '#lib/local/websocket';
import { BENCH_ADMIN, startBenchHost, subscribedSocket } from './host.ts';

const DRIVERS = 1000;
const SUBSCRIBERS = 50;
const SECONDS = 20;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

export async function benchLiveOps() {
  const host = await startBenchHost('liveops');
  const { importLocations, storeFixes } = await import('#shared/locations/fixes');
  const login = (await (
    await fetch(`${host.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: BENCH_ADMIN }),
    })
  ).json()) as { bearer_token: string };
  const org = (await (
    await fetch(`${host.url}/v1/admin/organisations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${login.bearer_token}` },
      body: JSON.stringify({ name: 'Live fleet', kind: 'transporter' }),
    })
  ).json()) as { id: string };

  // The fleet, spread over a city (each driver stays inside its 4.9 km cell while it moves).
  const drivers = Array.from({ length: DRIVERS }, (_, i) => ({
    id: randomUUID(),
    latitude: 1.25 + (i % 40) * 0.004,
    longitude: 103.7 + Math.floor(i / 40) * 0.006,
  }));
  const record = (d: (typeof drivers)[number], version: number) => {
    const now = new Date().toISOString();
    return {
      id: randomUUID().replace(/-/g, '').slice(0, 24),
      user_id: d.id,
      device_id: null,
      latitude: d.latitude + version * 0.00001,
      longitude: d.longitude,
      altitude: null,
      client_time_utc: now,
      client_timezone: null,
      server_time: now,
      version,
      org_id: org.id,
      service_types: [],
    };
  };
  await importLocations(drivers.map((d) => record(d, 1)));

  const frames: number[] = new Array(SUBSCRIBERS).fill(0);
  const driversPerFrame: number[] = [];
  const lags: number[] = [];
  let measuring = false;
  const sockets: WebSocket[] = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const socket = await subscribedSocket(host.url, login.bearer_token, `org.${org.id}`);
    socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { name?: string; data?: { drivers: { server_time: string }[] } };
      if (!measuring || frame.name !== 'driver.location') return;
      const now = Date.now();
      frames[i]!++;
      driversPerFrame.push(frame.data!.drivers.length);
      for (const d of frame.data!.drivers) lags.push(now - Date.parse(d.server_time));
    });
    sockets.push(socket);
  }

  measuring = true;
  const started = Date.now();
  let written = 0;
  let rounds = 0;
  // A round a second while the writes keep up; bounded to SECONDS of writing whatever the machine manages.
  while (Date.now() - started < SECONDS * 1000) {
    const due = started + rounds * 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    rounds++;
    await storeFixes(drivers.map((d) => record(d, rounds + 1)));
    written += DRIVERS;
  }
  const writing = (Date.now() - started) / 1000;
  // The last batches are still on their way: a poll interval and a delivery.
  await new Promise((r) => setTimeout(r, 3000));
  measuring = false;
  const elapsed = (Date.now() - started) / 1000;
  const perSubscriber = frames.map((n) => n / elapsed);
  console.log(
    `\n## Live positions: ${DRIVERS} drivers, a fix a second each, ${SUBSCRIBERS} dispatchers on org.<id>, ${SECONDS} s`,
  );
  console.log(
    `fixes written: ${written} in ${writing.toFixed(1)} s (${(written / writing).toFixed(0)}/s of the ${DRIVERS}/s asked; the emulator's write rate is the limit when lower)`,
  );
  console.log(
    `frames per subscriber per second: mean ${(perSubscriber.reduce((a, b) => a + b, 0) / SUBSCRIBERS).toFixed(2)}, max ${Math.max(...perSubscriber).toFixed(2)}`,
  );
  console.log(
    `drivers per frame: p50 ${percentile(driversPerFrame, 50)}, max ${Math.max(...driversPerFrame)}; positions delivered ${lags.length} (${(lags.length / SUBSCRIBERS / written).toFixed(3)} per fix per subscriber)`,
  );
  console.log(
    `delivery lag (server_time → subscriber): p50 ${percentile(lags, 50)} ms  p99 ${percentile(lags, 99)} ms`,
  );
  for (const socket of sockets) socket.close();
  await new Promise((resolve) => setTimeout(resolve, 200));
  await gateway.idle();
}
