/**
 * Live positions stay live (issue 27.5): the lag from a fix's client time to the `driver.location` frame that shows it
 * at a dispatcher, with the location uploader's defaults (lib/client/uploader-defaults.ts).
 *
 * A bench host; an organisation; a dispatcher (OrgAdmin) subscribed to `org.<id>` over a real WebSocket; DRIVERS
 * drivers of that organisation, each signed in and each with a real LocationUploader (its defaults, its real clock,
 * real fetch to the host: X13 `POST /v1/driver/locations`). Each driver's phone offers a GPS sample a second from a
 * moment spread over the first upload interval, driving straight at 8–16 m/s (every tenth driver stands still, so the
 * time filter keeps its fixes); the uploader filters them (30 s or 30 m) and sends them in batches (30 s or 10 fixes).
 * Run in real time (SECONDS of driving), then the GPS stops and the bench waits one more upload interval for the
 * uploaders' own timers to send what they hold (nothing is flushed early: that would shorten the lag).
 *
 * Every kept fix's lag ends at the first frame that shows its driver at that fix or a newer one (X13 stores a batch's
 * newest fix only), split into the phone's buffer wait, X13 until the service stamped the position (`server_time`),
 * and the stream plus fan-out to the subscriber. Prints p50/p99/max, the frames and fixes, and the goal: p99 within
 * the upload interval + 2 s. Asserts nothing. `npx tsx bench/position-lag.ts` runs it alone; LAG_DRIVERS and
 * LAG_SECONDS change the shape.
 */
import './env.ts';
import { dispatchClient, joinFromOutbox, must } from '#lib/client/index';
import { type Fix, LocationUploader } from '#lib/client/location-uploader';
import { UPLOADER_DEFAULTS } from '#lib/client/uploader-defaults';
import { gateway } from '#lib/local/websocket';
import { ROLES } from '#shared/auth/roles';
import { mapLimited } from '#shared/concurrency';
import { BENCH_ADMIN, startBenchHost, stopBenchHost, subscribedSocket } from './host.ts';
import { type FrameEntry, matchLags, type SentFix, summarise } from './position-lag-stats.ts';

const DRIVERS = Number(process.env['LAG_DRIVERS'] ?? 100);
const SECONDS = Number(process.env['LAG_SECONDS'] ?? 120);
const GPS_HZ = 1;
const PASSWORD = 'a-good-long-password';

/** A driver on a straight road: a start in the city, a heading and a speed (0: standing still). */
interface Route {
  latitude: number;
  longitude: number;
  headingRad: number;
  speedMs: number;
}

const M_PER_DEG = 111_320;

function positionAt(route: Route, seconds: number) {
  const metres = route.speedMs * seconds;
  return {
    latitude: route.latitude + (metres * Math.cos(route.headingRad)) / M_PER_DEG,
    longitude:
      route.longitude +
      (metres * Math.sin(route.headingRad)) / (M_PER_DEG * Math.cos((route.latitude * Math.PI) / 180)),
  };
}

export async function benchPositionLag() {
  const host = await startBenchHost('position-lag');
  const client = (token?: string) => dispatchClient(host.url, token);
  const sysadmin = client(
    must(await client().POST('/v1/auth/login', { body: { user: BENCH_ADMIN } }), 'log in as SysAdmin').bearer_token,
  );
  const tag = Math.random().toString(36).slice(2, 8);
  const org = must(
    await sysadmin.POST('/v1/admin/organisations', { body: { name: `Lag ${tag}`, kind: 'transporter' } }),
    'create the organisation',
  );
  const member = async (email: string, role_id: string, name: string) => {
    must(
      await sysadmin.POST('/v1/admin/invitations', { body: { user: { email, org_id: org.id, role_id } } }),
      `invite ${email}`,
    );
    return joinFromOutbox(host.url, email, name, PASSWORD);
  };
  const signedIn = performance.now();
  const dispatcher = await member(`dispatcher.${tag}@lag.example`, ROLES.OrgAdmin, 'Dispatcher');
  const drivers = await mapLimited(
    Array.from({ length: DRIVERS }, (_, i) => i),
    8,
    (i) => member(`driver${i}.${tag}@lag.example`, ROLES.OrgDriver, `Driver ${i}`),
  );
  const setupS = (performance.now() - signedIn) / 1000;

  // The dispatcher's screen: every driver of every `driver.location` frame, with its receipt time.
  const entries: FrameEntry[] = [];
  let frames = 0;
  const socket = await subscribedSocket(host.url, dispatcher.bearer_token, `org.${org.id}`);
  socket.on('message', (data) => {
    const receivedMs = Date.now();
    const frame = JSON.parse(data.toString()) as {
      name?: string;
      data?: { drivers: { user_id: string; client_time_utc: string; server_time: string }[] };
    };
    if (frame.name !== 'driver.location') return;
    frames++;
    for (const d of frame.data?.drivers ?? []) {
      entries.push({
        userId: d.user_id,
        clientMs: Date.parse(d.client_time_utc),
        serverMs: Date.parse(d.server_time),
        receivedMs,
      });
    }
  });

  // Each kept fix, and when the X13 holding it was first posted (a resend keeps the first time: the phone's part ends
  // when it first tried).
  const sent: SentFix[] = [];
  const sentByKey = new Map<string, SentFix>();
  let requests = 0;
  let failures = 0;
  const phones = drivers.map((session, i) => {
    const userId = session.user.id;
    const timedFetch: typeof fetch = async (input, init) => {
      const postedMs = Date.now();
      requests++;
      const body = JSON.parse(String(init?.body)) as { fixes: Fix[] };
      for (const fix of body.fixes) {
        const kept = sentByKey.get(`${userId} ${fix.client_time_utc}`);
        if (kept && kept.postedMs === undefined) kept.postedMs = postedMs;
      }
      return fetch(input, init);
    };
    const uploader = new LocationUploader({
      baseUrl: host.url,
      token: () => session.bearer_token,
      fetch: timedFetch,
      onError: () => {
        failures++;
      },
    });
    // Spread over a 0.05° square (about 5.5 km) around the city centre, driving in all directions.
    const route: Route = {
      latitude: 1.33 + ((i * 37) % 100) * 0.0005,
      longitude: 103.8 + ((i * 61) % 100) * 0.0005,
      headingRad: ((i * 137.5) % 360) * (Math.PI / 180),
      speedMs: i % 10 === 9 ? 0 : 8 + ((i * 7) % 9),
    };
    return { userId, uploader, route, timers: [] as ReturnType<typeof setTimeout>[] };
  });

  let samples = 0;
  let kept = 0;
  const started = Date.now();
  for (const [i, phone] of phones.entries()) {
    // Phones switch on (the app starts its uploader and the GPS) at moments spread over the first upload interval, as
    // a fleet's would: their upload timers are not in step.
    const offsetMs = Math.round((i / phones.length) * UPLOADER_DEFAULTS.uploadIntervalS * 1000);
    phone.timers.push(
      setTimeout(async () => {
        await phone.uploader.start();
        const switchedOn = Date.now();
        const tick = () => {
          const now = Date.now();
          const fix: Fix = {
            ...positionAt(phone.route, (now - switchedOn) / 1000),
            altitude: 12,
            client_time_utc: new Date(now).toISOString(),
          };
          samples++;
          if (phone.uploader.record(fix) === 'queued') {
            kept++;
            const entry: SentFix = { userId: phone.userId, clientMs: now };
            sent.push(entry);
            sentByKey.set(`${phone.userId} ${fix.client_time_utc}`, entry);
          }
        };
        tick();
        phone.timers.push(setInterval(tick, 1000 / GPS_HZ));
      }, offsetMs),
    );
  }
  // The record above is synchronous and the uploader sends from a later tick (a full batch: `void flush()`), so the
  // fix is registered before its X13 is posted.

  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  for (const phone of phones) for (const timer of phone.timers) clearTimeout(timer);
  const driven = (Date.now() - started) / 1000;
  // The uploaders send what they still hold on their own timers: wait one upload interval, and the frames' way.
  const deadline = Date.now() + (UPLOADER_DEFAULTS.uploadIntervalS + 10) * 1000;
  while (Date.now() < deadline && matchLags(sent, entries).undelivered > 0) {
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  for (const phone of phones) phone.uploader.stop();
  const report = matchLags(sent, entries);

  const goalS = UPLOADER_DEFAULTS.uploadIntervalS + 2;
  const total = summarise(report.fixes, 'total');
  const row = (label: string, samplesOf: typeof report.fixes, part: Parameters<typeof summarise>[1]) => {
    const s = summarise(samplesOf, part);
    return `  ${label.padEnd(44)} p50 ${s.p50.toFixed(2).padStart(6)} s  p99 ${s.p99.toFixed(2).padStart(6)} s  max ${s.max.toFixed(2).padStart(6)} s`;
  };
  console.log(
    `\n## Position lag: ${DRIVERS} drivers with the location uploader's defaults (a fix kept every ${UPLOADER_DEFAULTS.timeFilterS} s or ${UPLOADER_DEFAULTS.distanceFilterM} m, one X13 every ${UPLOADER_DEFAULTS.uploadIntervalS} s or ${UPLOADER_DEFAULTS.maxFixesPerUpload} fixes), GPS at ${GPS_HZ} Hz, ${driven.toFixed(0)} s real time, one dispatcher on org.<id>`,
  );
  console.log(
    `GPS samples ${samples}, fixes kept ${kept}, X13 requests ${requests} (${failures} not answered 2xx), frames ${frames} carrying ${entries.length} positions; signed in ${DRIVERS + 1} users in ${setupS.toFixed(1)} s`,
  );
  console.log(`every kept fix → the first frame showing it or a newer position (${report.fixes.length} fixes):`);
  console.log(row('total (client time → frame)', report.fixes, 'total'));
  console.log(row('on the phone (client time → X13 sent)', report.fixes, 'phone'));
  console.log(row('X13 (sent → server_time)', report.fixes, 'request'));
  console.log(row('stream + fan-out (server_time → frame)', report.fixes, 'stream'));
  console.log(`the position each frame carries (${report.frames.length} positions):`);
  console.log(row('total (client time → frame)', report.frames, 'total'));
  console.log(row('on the phone (client time → X13 sent)', report.frames, 'phone'));
  console.log(row('server (X13 sent → frame)', report.frames, 'server'));
  console.log(
    `fixes never shown ${report.undelivered}, frame positions matching no sent fix ${report.unmatched}; goal p99 ≤ upload interval + 2 s = ${goalS} s: p99 ${total.p99.toFixed(2)} s, ${total.p99 <= goalS && report.undelivered === 0 ? 'pass' : 'FAIL'}`,
  );

  socket.close();
  await new Promise((resolve) => setTimeout(resolve, 200));
  await gateway.idle();
}

if (process.argv[1]?.endsWith('position-lag.ts')) {
  await benchPositionLag();
  await stopBenchHost();
}
