/**
 * A day of dispatch against a running local host, through the typed client: an organisation and its planner,
 * drivers signing up and sending their positions in batches (the client's LocationUploader), a CSV import through
 * object storage, a planning of runsheets naming the imported tasks whose job offers them to the nearest drivers,
 * drivers finding their offers (X12), live events over the WebSocket, accepts and a rejection. `npm run demo` prints it,
 * each step with the operations behind it (spec id, method, path); the end-to-end suite runs it too, so the demo cannot
 * rot. Read it as the example of the typed client (lib/client): every step is a few calls.
 */
import type { Middleware } from 'openapi-fetch';
import WebSocket from 'ws';
import { type DispatchClient, dispatchClient, joinFromOutbox, must } from '#lib/client/index';
import { LocationUploader } from '#lib/client/location-uploader';
import { routes } from '#shared/routes';

export interface DemoOptions {
  url: string;
  adminEmail: string;
  adminPassword: string;
  log?: (line: string) => void;
  /** How long to wait, once the planner can sign in at `/ops`, before the drivers start moving (default 0). */
  watchMs?: number;
  /** Names and addresses carry it (default: random), so that two runs against one host never collide. */
  tag?: string;
  /** Every call of the day goes through it (the chaos test passes a retrying fetch); default the global fetch. */
  fetch?: typeof globalThis.fetch;
  /** Ends the day early (Ctrl-C): the demo stops at its next call or wait, moves its drivers no more, and rejects. */
  signal?: AbortSignal;
  /**
   * The drivers drive off once the offers are out, sending fixes as they go (default true; the pairing, made before,
   * is the same every day). The chaos test turns it off to compare two days' final positions.
   */
  keepMoving?: boolean;
}

export interface DemoSummary {
  organisationId: string;
  drivers: number;
  importStatus: string;
  tasksImported: number;
  planningId: string;
  jobStatus: string;
  pairs: number;
  /** Pair states at the end of the day, e.g. `{ accepted: 3, rejected: 9, broadcasted: 2 }`. */
  states: Record<string, number>;
  /** How the offers ended: taken, declined by their driver, closed by the system (by reason), still open. */
  outcomes: { accepted: number; declined: number; closed: Record<string, number>; open: number };
  /** Position batches the drivers' apps sent while the day went on (they keep moving). */
  positionBatches: number;
  /** Names of the events the planner saw on `planning.<id>`. */
  events: string[];
  /** The live operations page, and whom to sign in as there to watch the day. */
  ops: { url: string; email: string; password: string };
}

const PASSWORD = 'a-good-long-password';
const DEPOT = { latitude: 1.2966, longitude: 103.852 };
const STOPS = [
  ['Raffles Place', 1.284, 103.8515],
  ['Tanjong Pagar', 1.2764, 103.8458],
  ['Bugis', 1.3006, 103.8559],
  ['Orchard', 1.3048, 103.8318],
  ['Novena', 1.3204, 103.8438],
  ['Toa Payoh', 1.3343, 103.8563],
] as const;

/** A pause that an abort ends at once (rejecting with the abort's reason). */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  signal?: AbortSignal,
): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await pause(100, signal);
  }
}

/** The spec id of a call the typed client makes, by its method and path template (`/v1/plannings/{planningID}`). */
function specId(method: string, schemaPath: string): string {
  return routes.find((route) => route.method === method && route.path === schemaPath)?.id ?? '?';
}

/** The operations called since the last step, in order, repeats folded: `A9 POST /v1/org-admin/invitations ×5`. */
class CallLog {
  private calls: string[] = [];
  readonly middleware: Middleware = {
    onRequest: ({ request, schemaPath }) => {
      this.calls.push(`${specId(request.method, schemaPath)} ${request.method} ${schemaPath}`);
      return undefined;
    },
  };

  record(call: string) {
    this.calls.push(call);
  }

  /** The calls so far, folded, and forgets them. */
  take(): string[] {
    const counts = new Map<string, number>();
    for (const call of this.calls) counts.set(call, (counts.get(call) ?? 0) + 1);
    this.calls = [];
    return [...counts].map(([call, n]) => (n > 1 ? `${call} ×${n}` : call));
  }
}

function csvFiles() {
  const header =
    'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,total_item_weight,total_weight_unit,from_latitude,from_longitude';
  const tasks = STOPS.map(
    ([name, lat, lng], i) =>
      `T${i + 1},"${10 + i} Depot Rd",Singapore,SG,"${name} Mall",Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T03:00:00Z,Asia/Singapore,2026-11-22T04:00:00Z,2026-11-22T08:00:00Z,Asia/Singapore,${5 + i},kg,${lat},${lng}`,
  );
  const items = STOPS.map((_, i) => `T${i + 1},SKU-${i + 1},Parcel,${i + 1},1.5,kg,0.02,m3`);
  return {
    tasks: `${[header, ...tasks].join('\n')}\n`,
    items: `${['task_ref,sku,description,quantity,weight,weight_unit,volume,volume_unit', ...items].join('\n')}\n`,
  };
}

export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const log = options.log ?? (() => {});
  const signal = options.signal;
  const started = Date.now();
  const calls = new CallLog();
  // The drivers' apps send their fixes with the uploader (X13), beside the typed client: counted from its stats.
  const uploaders: LocationUploader[] = [];
  const x13 = routes.find((route) => route.id === 'X13')!;
  let x13Counted = 0;
  const step = (text: string) => {
    const sent = uploaders.reduce((n, uploader) => n + uploader.stats.requests, 0);
    for (; x13Counted < sent; x13Counted++) calls.record(`X13 ${x13.method} ${x13.path}`);
    log(`${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s  ${text}`);
    for (const call of calls.take()) log(`          ↳ ${call}`);
  };
  const base = options.fetch ?? globalThis.fetch;
  // Every call, the typed client's and the uploader's, stops when the day is called off.
  const send: typeof globalThis.fetch = (input, init) => {
    signal?.throwIfAborted();
    return base(input, signal ? { ...init, signal } : init);
  };
  const api = (token?: string) => {
    const client = dispatchClient(options.url, token, send);
    client.use(calls.middleware);
    return client;
  };
  let moving: ReturnType<typeof setInterval> | undefined;
  let socket: WebSocket | undefined;
  try {
    return await day();
  } finally {
    clearInterval(moving);
    for (const uploader of uploaders) uploader.stop();
    socket?.close();
  }

  async function day(): Promise<DemoSummary> {
    const login = async (email: string, password: string) =>
      must(await api().POST('/v1/auth/login', { body: { user: { email, password } } }), `log in as ${email}`);
    const tag = options.tag ?? Math.random().toString(36).slice(2, 7);

    // 07:00 — the platform admin opens an organisation and invites its planner.
    const admin = api((await login(options.adminEmail, options.adminPassword)).bearer_token);
    const organisation = must(
      await admin.POST('/v1/admin/organisations', { body: { name: `Harbour Freight ${tag}`, kind: 'transporter' } }),
      'create the organisation',
    );
    step(`SysAdmin created organisation “${organisation.name}”`);

    const join = async (inviter: DispatchClient, email: string, roleId: string | undefined, name: string) => {
      if (roleId) {
        must(await inviter.POST('/v1/org-admin/invitations', { body: { user: { email, role_id: roleId } } }), 'invite');
      } else {
        must(
          await inviter.POST('/v1/admin/invitations', { body: { user: { email, org_id: organisation.id } } }),
          'invite',
        );
      }
      return joinFromOutbox(options.url, email, name, PASSWORD, send);
    };
    const plannerSession = await join(admin, `planner.${tag}@harbour.example`, undefined, 'Priya Planner');
    const planner = api(plannerSession.bearer_token);
    step(`Priya accepted her invitation from the mail outbox and logged in as OrgAdmin`);
    const ops = { url: `${options.url}/ops`, email: `planner.${tag}@harbour.example`, password: PASSWORD };
    step(`watch the day live at ${ops.url}, signed in as ${ops.email} / ${ops.password}`);
    if (options.watchMs) {
      step(`waiting ${Math.round(options.watchMs / 1000)} s for you to sign in there`);
      await pause(options.watchMs, signal);
    }

    // 07:30 — drivers join and start their day where they are.
    const roles = must(await planner.GET('/v1/roles'), 'list roles');
    const driverRole = roles.roles.find((role) => role.name === 'OrgDriver')!.id;
    const drivers: { id: string; name: string; client: DispatchClient; token: string }[] = [];
    const names = ['Ahmad', 'Bee Lian', 'Chen', 'Devi', 'Elango'];
    for (const [i, name] of names.entries()) {
      const session = await join(planner, `driver${i + 1}.${tag}@harbour.example`, driverRole, name);
      drivers.push({ id: session.user.id, name, client: api(session.bearer_token), token: session.bearer_token });
    }
    step(`${drivers.length} drivers joined: ${names.join(', ')}`);
    // Each driver's app keeps its samples and sends them in batches (X13) with the typed client's uploader.
    for (const [i, driver] of drivers.entries()) {
      const uploader = new LocationUploader({
        baseUrl: options.url,
        token: () => driver.token,
        fetch: send,
        uploadIntervalS: 2,
      });
      for (let move = 0; move < 3; move++) {
        const [, lat, lng] = STOPS[(i + move) % STOPS.length]!;
        uploader.record({
          latitude: lat + 0.002 * move,
          longitude: lng,
          client_time_utc: new Date(Date.now() - (3 - move) * 60_000).toISOString(),
          client_timezone: 'Asia/Singapore',
        });
      }
      // A batch whose send failed stays with the uploader, which sends it again on its own retry timer (1 s, then
      // doubling): the app flushes again after a pause, as a driver's app would at its next moment, a few times.
      let flushed = await uploader.flush();
      for (let again = 0; again < 5 && flushed.pending > 0 && flushed.reason === 'send_failed'; again++) {
        await pause(2 ** again * 1000, signal);
        flushed = await uploader.flush();
      }
      if (uploader.pending.length > 0 || uploader.stats.sent !== 3)
        throw new Error(
          `${driver.name}'s fixes were not sent (${uploader.stats.sent} of 3 sent, ${uploader.stats.rejected} refused; ${flushed.reason ?? 'no reason'}: ${flushed.detail ?? ''})`,
        );
      uploaders.push(uploader);
    }
    step('every driver sent three fixes in one batch (X13) while driving to their first area');
    const nearby = must(
      await planner.GET('/v1/driver-locations', {
        params: { query: { latitude: String(DEPOT.latitude), longitude: String(DEPOT.longitude), radius: '5000' } },
      }),
      'search drivers around the depot',
    );
    const nearest = must(
      await planner.GET('/v1/driver-locations/nearest', {
        params: { query: { latitude: String(DEPOT.latitude), longitude: String(DEPOT.longitude) } },
      }),
      'find the nearest driver',
    );
    const nearestName = drivers.find((d) => d.id === nearest.location.user_id)?.name;
    step(
      `${nearby.locations.length} drivers within 5 km of the depot; nearest is ${nearestName} at ${Math.round(nearest.location.distance_m ?? 0)} m`,
    );

    // 08:00 — the day's orders arrive as CSV files, through object storage.
    const files = csvFiles();
    const uploaded: { storage_upload_key: string }[] = [];
    for (const [name, text] of [
      ['tasks.csv', files.tasks],
      ['items.csv', files.items],
    ] as const) {
      const link = must(
        await planner.GET('/v1/task-import-jobs/upload-url', { params: { query: { filename: name } } }),
        `presign ${name}`,
      );
      // The presigned PUT signs this type (S3 refuses another; a string body would go as text/plain).
      const put = await send(link.file.url, { method: 'PUT', body: text, headers: { 'content-type': 'text/csv' } });
      if (!put.ok) throw new Error(`upload of ${name} failed: ${put.status}`);
      uploaded.push({ storage_upload_key: link.file.storage_upload_key });
    }
    const job = must(
      await planner.POST('/v1/task-import-jobs', {
        body: {
          files: uploaded,
          start_timezone: 'Asia/Singapore',
          start_time: '2026-11-22T08:00:00+08:00',
          end_timezone: 'Asia/Singapore',
          end_time: '2026-11-22T20:00:00+08:00',
          service_type: 'van_1.7m',
        },
      }),
      'create the import job',
    );
    must(
      await planner.POST('/v1/task-import-jobs/{import_job_id}/start', { params: { path: { import_job_id: job.id } } }),
      'start the import',
    );
    const imported = await waitFor(
      async () =>
        must(
          await planner.GET('/v1/task-import-jobs/{import_job_id}/status', {
            params: { path: { import_job_id: job.id } },
          }),
          'read the import status',
        ),
      (status) => ['completed', 'failed'].includes(status.import_status),
      'the import',
      signal,
    );
    const result = must(
      await planner.GET('/v1/task-import-jobs/{import_job_id}/result', { params: { path: { import_job_id: job.id } } }),
      'read the import result',
    );
    if (imported.import_status !== 'completed') throw new Error(`the import failed: ${result.errors.join('; ')}`);
    step(
      `import ${imported.import_status}: ${result.total_tasks_imported} tasks and ${result.total_items_imported} items from two CSV files`,
    );

    // 08:30 — a planning: two runsheets per area, offered to the nearest drivers; the planner watches live.
    const planning = must(await planner.POST('/v1/plannings', { body: { name: `Morning run ${tag}` } }), 'plan');
    const events: string[] = [];
    // A handshake the service could not check just now (503, a dependency fault) is tried again, as any 503 is.
    const connect = async (): Promise<WebSocket> => {
      for (let attempt = 1; ; attempt++) {
        const candidate = new WebSocket(
          `${options.url.replace(/^http/, 'ws')}/ws?token=${plannerSession.bearer_token}`,
        );
        const opened = await new Promise<boolean>((resolve, reject) => {
          candidate.once('open', () => resolve(true));
          candidate.once('unexpected-response', (_request, response) => {
            if (response.statusCode === 503 && attempt < 10) resolve(false);
            else reject(new Error(`the WebSocket handshake answered ${response.statusCode}`));
          });
          candidate.once('error', reject);
        });
        if (opened) return candidate;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };
    socket = await connect();
    const live = socket;
    const subscribe = () => live.send(JSON.stringify({ action: 'subscribe', channels: [`planning.${planning.id}`] }));
    const subscribed = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('gave up waiting for the subscription')), 30_000);
      live.on('message', (data) => {
        const frame = JSON.parse(data.toString()) as { type: string; name?: string; code?: string };
        if (frame.type === 'subscribed') {
          clearTimeout(timer);
          resolve();
        }
        // The service could not subscribe us just now: ask again, as the frame says.
        if (frame.type === 'error' && frame.code === 'unavailable') setTimeout(subscribe, 200);
        if (frame.type === 'event' && frame.name) events.push(frame.name);
      });
    });
    subscribe();
    await subscribed;
    // The runsheets name the imported tasks by id (X10 lists them), one area's task each.
    const tasks = must(
      await planner.GET('/v1/tasks', { params: { query: { import_job_id: job.id, order: 'asc' } } }),
      'list the imported tasks',
    ).tasks;
    const runsheets = STOPS.map(([name], i) => {
      const task = tasks.find((t) => t.task_ref === `T${i + 1}`);
      if (!task) throw new Error(`the import has no task T${i + 1}`);
      return { id: `RS-${i + 1}`, name: `${name} run`, task_ids: [task.id] };
    });
    must(
      await planner.POST('/v1/plannings/{planningID}/runsheets', {
        params: { path: { planningID: planning.id } },
        body: { runsheets },
      }),
      'add runsheets',
    );
    const ready = must(
      await planner.POST('/v1/plannings/{planningID}/drivers', {
        params: { path: { planningID: planning.id } },
        body: { drivers: drivers.map((d) => ({ id: d.id })) },
      }),
      'add drivers',
    );
    step(`planning “${ready.name}”: ${ready.total_runsheets} runsheets, ${ready.total_drivers} drivers`);
    must(
      await planner.POST('/v1/plannings/{planningID}/job', {
        params: { path: { planningID: planning.id } },
        // A courier may ride several of the morning's short runsheets (contract 4.7's limit, 1 by default).
        body: { version_rev: ready.version_rev, max_candidates: 2, offer_ttl_s: 900, max_runsheets_per_driver: 10 },
      }),
      'start the planning job',
    );
    const finished = await waitFor(
      async () =>
        must(
          await planner.GET('/v1/plannings/{planningID}/job/status', { params: { path: { planningID: planning.id } } }),
          'read the job status',
        ),
      (status) => !['queued', 'processing'].includes(status.current_status),
      'the planning job',
      signal,
    );
    const pairsOf = async () =>
      must(
        await planner.GET('/v1/broadcast-plans/{plan_id}/pairs', { params: { path: { plan_id: planning.id } } }),
        'list pairs',
      ).pair_records;
    // Each driver's app finds its own open offers (X12); in runsheet order, each runsheet's offers in the drivers'
    // order: the same answers every day.
    const rank = (driverId: string) => drivers.findIndex((d) => d.id === driverId);
    const offered = [];
    for (const driver of drivers) {
      offered.push(...must(await driver.client.GET('/v1/driver/offers'), 'list my offers').offers);
    }
    offered.sort(
      (a, b) => a.pair.runsheet.id.localeCompare(b.pair.runsheet.id) || rank(a.pair.driver.id) - rank(b.pair.driver.id),
    );
    step(
      `planning job ${finished.current_status} (${finished.statuses.map((s) => s.status).join(' → ')}): ${offered.length} offers broadcast, 2 nearest drivers per runsheet`,
    );

    // The offers are out: the drivers drive off (about 15 m/s, each its own way), their apps recording a fix every
    // second and sending what they keep every two seconds (X13; the demo's clock is faster than a day's).
    let tick = 0;
    moving = setInterval(() => {
      if (options.keepMoving === false) return;
      tick++;
      for (const [i, uploader] of uploaders.entries()) {
        const [, lat, lng] = STOPS[(i + 2) % STOPS.length]!;
        const heading = (i * 2 * Math.PI) / uploaders.length;
        uploader.record({
          latitude: lat + 0.004 + 0.000135 * tick * Math.cos(heading),
          longitude: lng + 0.000135 * tick * Math.sin(heading),
          client_time_utc: new Date().toISOString(),
          client_timezone: 'Asia/Singapore',
        });
      }
    }, 1000);

    // 09:00 — drivers answer their offers: the first accept of a runsheet wins, the rival offer is closed.
    const answered = new Set<string>();
    let accepts = 0;
    let rejects = 0;
    for (const pair of offered) {
      if (answered.has(pair.pair.runsheet.id)) continue;
      const driver = drivers.find((d) => d.id === pair.pair.driver.id)!;
      const path = { plan_id: pair.plan.id, pair_id: pair.id };
      const happened_at_utc = new Date().toISOString();
      if (pair.pair.runsheet.id === 'RS-6' && rejects === 0) {
        must(
          await driver.client.POST('/v1/broadcast-plans/{plan_id}/pairs/{pair_id}/rejected', {
            params: { path },
            body: { happened_at_utc },
          }),
          'reject',
        );
        rejects++;
        step(`${driver.name} rejected ${pair.pair.runsheet.name ?? pair.pair.runsheet.id}`);
        continue;
      }
      must(
        await driver.client.POST('/v1/broadcast-plans/{plan_id}/pairs/{pair_id}/accepted', {
          params: { path },
          body: { happened_at_utc },
        }),
        'accept',
      );
      answered.add(pair.pair.runsheet.id);
      accepts++;
      step(`${driver.name} accepted ${pair.pair.runsheet.name ?? pair.pair.runsheet.id}`);
    }
    await pause(300, signal);
    live.close();

    const final = await pairsOf();
    const states: Record<string, number> = {};
    for (const pair of final) states[pair.current_state] = (states[pair.current_state] ?? 0) + 1;
    // A driver's refusal (their `rejected`) and the system's closures (`system_rejected`, with its reason) end in the
    // same state; the last entry of each pair's history tells them apart.
    const outcomes: DemoSummary['outcomes'] = { accepted: 0, declined: 0, closed: {}, open: 0 };
    for (const pair of final) {
      const last = pair.statuses.at(-1);
      if (pair.current_state === 'accepted') outcomes.accepted++;
      else if (last?.action === 'rejected') outcomes.declined++;
      else if (last?.action === 'system_rejected') {
        const reason = last.reason ?? 'no reason';
        outcomes.closed[reason] = (outcomes.closed[reason] ?? 0) + 1;
      } else outcomes.open++;
    }
    const closures = Object.entries(outcomes.closed).map(([reason, n]) => `${n} ${reason}`);
    step(
      `end of the morning: ${accepts} runsheets assigned; offers: ${outcomes.accepted} accepted, ${outcomes.declined} declined by their driver, ${closures.length ? closures.join(', ') : 'none'} closed by the system, ${outcomes.open} still open`,
    );
    step(`pairs by state: ${JSON.stringify(states)}`);
    const counts = new Map<string, number>();
    for (const name of events) counts.set(name, (counts.get(name) ?? 0) + 1);
    step(
      `live events on planning.${planning.id.slice(0, 8)}…: ${[...counts].map(([n, c]) => `${n} ×${c}`).join(', ')}`,
    );

    return {
      organisationId: organisation.id,
      drivers: drivers.length,
      importStatus: imported.import_status,
      tasksImported: result.total_tasks_imported,
      planningId: planning.id,
      jobStatus: finished.current_status,
      pairs: final.length,
      states,
      outcomes,
      positionBatches: uploaders.reduce((n, uploader) => n + uploader.stats.requests, 0) - uploaders.length,
      events,
      ops,
    };
  }
}
