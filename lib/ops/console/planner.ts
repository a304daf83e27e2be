/**
 * The planner (route planning, contract 4.10 and 4.11's insertions; docs/live-operations.md "A planner's day"): the
 * tasks of an import job, or the organisation's unplanned tasks (X10 `planned=false`), built into runsheets for a
 * fleet whose default is the planning's drivers (P3: one vehicle each, at their last position, L2), over the shift the
 * planner sets, always as a dry run first (X23 `dry_run`); the dry run reviewed on the map and in a table (each route
 * drawn, its kilometres and hours; the tasks left out with their reasons), then applied exactly as answered (X31).
 * During the day the unplanned tasks (new imports, or those a cancelled runsheet freed, X18) are fitted into the live
 * routes (X30), reviewed the same way before they are applied (X31 applies an insertion's dry run too).
 *
 * Everything a user typed (planning names, task refs, driver names, the service's sentences) is text: elements built
 * with `textContent` (dom.ts), never `innerHTML`; the map gets the routes' words as SVG titles, never as HTML.
 */
import { allPages, api } from './api.ts';
import { $, clockTime, enc, input, text } from './dom.ts';
import { locate } from './drivers.ts';
import { loadPlannings } from './load.ts';
import { clearPlan, drawPlan, PLAN_COLOURS } from './map.ts';
import { type Answer, driverName, drivers, isSysAdmin, now, orgId, screen, shortId } from './state.ts';

type RouteBuild = Answer<'/v1/plannings/{planningID}/routes/{buildID}', 'get'>['route_build'];
type BuildResult = NonNullable<RouteBuild['result']>;
type ImportedTask = Answer<'/v1/tasks', 'get'>['tasks'][number];
type ImportJob = Answer<'/v1/task-import-jobs', 'get'>['task_import_jobs'][number];
type PlanningRead = Answer<'/v1/plannings/{planningID}', 'get'>;
type Vehicle = {
  id: string;
  driver_id: string;
  start: { latitude: number; longitude: number };
  shift_start_utc: string;
  shift_end_utc: string;
};

/** X23's bound on a build's tasks (and X30's): the planner sends at most this many, and says so. */
const MAX_TASKS = 2000;
/** How often a build is read while it solves (X24). */
const POLL_MS = 1000;

/** What the planner holds: the unplanned tasks, the reasons the builds gave, the dry run under review. */
const planner = {
  planningId: '',
  /** X10's unplanned tasks of the organisation, by id. */
  unplanned: new Map<string, ImportedTask>(),
  /** Every task the planner has read, by id (for a ref in a review). */
  known: new Map<string, ImportedTask>(),
  /** The reason each task was last left out, as the builds reviewed here said it. */
  reasons: new Map<string, { code: string; detail: string }>(),
  /** The dry run under review: its build, and the `version_rev` it was asked with (X31 sends it back). */
  review: null as { build: RouteBuild; versionRev: string; planningId: string } | null,
  busy: false,
};

/** SysAdmin names the organisation it watches (`org_id`); the others' is their token's. */
const scoped = (join: '?' | '&') => (isSysAdmin() && orgId() ? `${join}org_id=${enc(orgId() as string)}` : '');
const say = (words: string, outcome = 'done') => {
  const status = $('planner-status');
  status.textContent = words;
  status.dataset['outcome'] = outcome;
};
const km = (metres: number) => `${(metres / 1000).toFixed(1)} km`;
const hours = (seconds: number) => `${(seconds / 3600).toFixed(1)} h`;
const refOf = (taskId: string) => planner.known.get(taskId)?.task_ref || shortId(taskId);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The value a `datetime-local` input shows for an instant (the browser's time zone, to the minute). */
const localInput = (ms: number) => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};

/** The panel's controls wired (main.ts, once). */
export function setUpPlanner(): void {
  const panel = $<HTMLDetailsElement>('planner');
  panel.addEventListener('toggle', () => {
    if (panel.open) void openPlanner();
  });
  $('planner-planning').addEventListener('change', () => void choosePlanning());
  $('planner-build').addEventListener('click', () => void dryRun('build'));
  $('planner-insert').addEventListener('click', () => void dryRun('insertion'));
  $('planner-apply').addEventListener('click', () => void applyReview());
  $('planner-discard').addEventListener('click', () => discard('Dry run discarded: nothing was added.'));
  $('planner-refresh').addEventListener('click', () => void openPlanner());
  for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="planner-source"]'))
    radio.addEventListener('change', () => renderUnplanned());
}

/**
 * Opened (or "read again"): the plannings, the import jobs and the unplanned tasks read; the shift, unless set, the
 * next ten hours.
 */
async function openPlanner(): Promise<void> {
  if (!input('planner-shift-start').value) {
    const start = Math.floor(now() / 60_000) * 60_000;
    input('planner-shift-start').value = localInput(start);
    input('planner-shift-end').value = localInput(start + 10 * 3_600_000);
  }
  try {
    const [list, jobs] = await Promise.all([
      api<Answer<'/v1/plannings', 'get'>>(`/v1/plannings?per_page=50${scoped('&')}`),
      isSysAdmin()
        ? allPages<ImportJob>(`/v1/admin/task-import-jobs?per_page=50&order=desc${scoped('&')}`, 'task_import_jobs', 1)
        : allPages<ImportJob>('/v1/task-import-jobs?per_page=50&order=desc', 'task_import_jobs', 1),
    ]);
    const select = $<HTMLSelectElement>('planner-planning');
    const wanted = planner.planningId || $<HTMLSelectElement>('planning-filter').value;
    select.replaceChildren(...list.plannings.map((p) => text('option', p.name, { value: p.id })));
    if (wanted && list.plannings.some((p) => p.id === wanted)) select.value = wanted;
    const completed = jobs.filter((job) => job.current_status === 'completed');
    $<HTMLSelectElement>('planner-import').replaceChildren(
      ...completed.map((job) =>
        text(
          'option',
          `${job.upload_record.files.map((f) => f.file_name).join(', ') || shortId(job.id)} · ${clockTime(job.created_at)}`,
          {
            value: job.id,
          },
        ),
      ),
    );
    await Promise.all([choosePlanning(), readUnplanned()]);
  } catch (error) {
    say(`Could not read the plannings: ${(error as Error).message}`, 'refused');
  }
}

/** The planning chosen: its drivers (P3) make the default fleet, each at their last position (L2). */
async function choosePlanning(): Promise<void> {
  planner.planningId = $<HTMLSelectElement>('planner-planning').value;
  const list = $('planner-vehicles');
  if (!planner.planningId) {
    list.replaceChildren(text('li', 'No planning: make one first (P1).', { class: 'muted' }));
    return;
  }
  const read = await readPlanning(planner.planningId);
  await Promise.all((read.drivers || []).map((d) => locate(d.id)));
  const rows = (read.drivers || []).map((d) => {
    const at = drivers.get(d.id)?.location;
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.value = d.id;
    box.checked = at != null;
    box.disabled = at == null;
    box.dataset['driver'] = d.id;
    const label = text('label', '');
    label.append(
      box,
      text('span', ` ${driverName(d.id)}`),
      text(
        'span',
        at ? ` · from ${at.latitude.toFixed(4)}, ${at.longitude.toFixed(4)}` : ' · no position yet: not in the fleet',
        { class: 'muted' },
      ),
    );
    return text('li', '', { 'data-driver': d.id }).appendChild(label).parentElement as HTMLElement;
  });
  list.replaceChildren(
    ...(rows.length ? rows : [text('li', 'This planning has no drivers (P7 adds them).', { class: 'muted' })]),
  );
}

const readPlanning = (planningId: string) => api<PlanningRead>(`/v1/plannings/${enc(planningId)}`);

/** X10's unplanned tasks of the organisation (the freed ones and the new imports), shown with their reasons. */
async function readUnplanned(): Promise<void> {
  const tasks = await allPages<ImportedTask>(`/v1/tasks?planned=false&per_page=1000${scoped('&')}`, 'tasks', 3);
  planner.unplanned = new Map(tasks.map((t) => [t.id, t]));
  for (const t of tasks) planner.known.set(t.id, t);
  renderUnplanned();
}

const source = () => document.querySelector<HTMLInputElement>('input[name="planner-source"]:checked')?.value;

/** The tasks a build or an insertion takes: the chosen import's unplanned ones, or every unplanned task. */
function chosenTasks(): ImportedTask[] {
  const all = [...planner.unplanned.values()];
  if (source() !== 'import') return all;
  const job = $<HTMLSelectElement>('planner-import').value;
  return all.filter((t) => t.import_job_id === job);
}

function renderUnplanned(): void {
  const tasks = [...planner.unplanned.values()].sort((a, b) =>
    (a.task_ref || a.id).localeCompare(b.task_ref || b.id, undefined, { numeric: true }),
  );
  $('planner-unplanned-count').textContent = String(tasks.length);
  $('planner-unplanned').replaceChildren(
    ...tasks.slice(0, 300).map((t) => {
      const why = planner.reasons.get(t.id);
      const li = text('li', '', { 'data-task': t.id, ...(why ? { 'data-code': why.code } : {}) });
      li.append(text('strong', t.task_ref || shortId(t.id)));
      if (why) li.append(text('span', ` · ${why.detail}`, { class: 'muted' }));
      return li;
    }),
    ...(tasks.length > 300 ? [text('li', `and ${tasks.length - 300} more`, { class: 'muted' })] : []),
  );
  $('planner-unplanned-empty').hidden = tasks.length > 0;
}

/** The fleet as the form says it: each driver ticked, one vehicle at their last position, the shift set. */
function fleet(): Vehicle[] | string {
  const start = Date.parse(input('planner-shift-start').value);
  const end = Date.parse(input('planner-shift-end').value);
  if (!Number.isFinite(start) || !Number.isFinite(end))
    return 'Set the shift: when the vehicles may leave and be back.';
  if (end <= start) return 'The shift ends before it starts.';
  const vehicles: Vehicle[] = [];
  for (const box of document.querySelectorAll<HTMLInputElement>('#planner-vehicles input[type=checkbox]:checked')) {
    const at = drivers.get(box.value)?.location;
    if (!at) continue;
    vehicles.push({
      id: `van-${vehicles.length + 1}`,
      driver_id: box.value,
      start: { latitude: at.latitude, longitude: at.longitude },
      shift_start_utc: new Date(start).toISOString(),
      shift_end_utc: new Date(end).toISOString(),
    });
  }
  return vehicles;
}

/**
 * A dry run: X23 (a build for the fleet) or X30 (into the live routes), with the planning's `version_rev` as it is
 * now; read (X24) until it completes, then reviewed.
 */
async function dryRun(kind: 'build' | 'insertion'): Promise<void> {
  if (planner.busy) return;
  const planningId = planner.planningId;
  if (!planningId) return say('Choose a planning first.', 'refused');
  const tasks = chosenTasks();
  if (tasks.length === 0)
    return say(source() === 'import' ? 'That import has no unplanned task.' : 'No unplanned task to plan.', 'refused');
  const vehicles = kind === 'build' ? fleet() : [];
  if (typeof vehicles === 'string') return say(vehicles, 'refused');
  if (kind === 'build' && vehicles.length === 0) return say('Tick at least one driver with a position.', 'refused');
  const limit = Math.max(1, Math.min(kind === 'build' ? 300 : 60, Number(input('planner-time').value) || 5));
  planner.busy = true;
  setButtons();
  discard('');
  try {
    const { version_rev } = await readPlanning(planningId);
    const taskIds = tasks.slice(0, MAX_TASKS).map((t) => t.id);
    const body = { task_ids: taskIds, version_rev, time_limit_s: limit, dry_run: true };
    const path = `/v1/plannings/${enc(planningId)}/routes${kind === 'insertion' ? '/insertions' : ''}`;
    say(
      `${kind === 'build' ? 'Building' : 'Fitting'} ${plural(taskIds.length, 'task')}${tasks.length > MAX_TASKS ? ` (the first ${MAX_TASKS} of ${tasks.length})` : ''}${kind === 'build' ? ` for ${plural(vehicles.length, 'vehicle')}` : ' into the live routes'}: a dry run…`,
      'pending',
    );
    const asked = await api<{ route_build: RouteBuild }>(path, {
      method: 'POST',
      body: JSON.stringify(kind === 'build' ? { ...body, vehicles } : body),
    });
    const build = await until(planningId, asked.route_build.id, limit);
    if (build.status === 'failed')
      return say(
        `The ${kind === 'build' ? 'build' : 'insertion'} failed: ${build.error?.detail || build.error?.code}`,
        'refused',
      );
    planner.review = { build, versionRev: version_rev, planningId };
    for (const left of build.result?.unplanned || []) planner.reasons.set(left.task_id, left);
    renderReview();
    renderUnplanned();
    say('A dry run: nothing was added yet. Review it, then apply it or discard it.', 'review');
    // The review in view (the panel scrolls), and the keyboard at its summary.
    $('planner-summary').focus();
  } catch (error) {
    say(`Refused: ${(error as Error).message}`, 'refused');
  } finally {
    planner.busy = false;
    setButtons();
  }
}

/** X24 until the build completes or fails (its progress said meanwhile). */
async function until(planningId: string, buildId: string, limitS: number): Promise<RouteBuild> {
  const deadline = Date.now() + (limitS + 90) * 1000;
  for (;;) {
    const read = await api<{ route_build: RouteBuild }>(`/v1/plannings/${enc(planningId)}/routes/${enc(buildId)}`);
    const build = read.route_build;
    if (build.status === 'completed' || build.status === 'failed') return build;
    if (Date.now() > deadline) throw new Error('the build did not finish in time; X25 lists it');
    const progress = build.progress;
    say(
      progress
        ? `Solving… best ${km(progress.best_distance_m)} after ${Math.round(progress.elapsed_ms / 1000)} s`
        : `${build.status === 'queued' ? 'Queued' : 'Solving'}…`,
      'pending',
    );
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The dry run under review: its summary, each route (colour, name, driver, stops, km, hours), what it left out. */
function renderReview(): void {
  const review = planner.review;
  $('planner-review').hidden = !review;
  if (!review) return;
  const { build } = review;
  const result = build.result as BuildResult;
  const summary = build.summary;
  const insertion = build.kind === 'insertion';
  const added = result.runsheets.reduce((n, r) => n + (r.added?.length || 0), 0);
  $('planner-summary').textContent = insertion
    ? `Into the live routes: ${plural(added, 'task')} added to ${plural(result.runsheets.length, 'runsheet')}, ${plural(result.unplanned.length, 'task')} left out.`
    : `${plural(summary?.planned ?? 0, 'task')} planned on ${plural(result.runsheets.length, 'runsheet')}, ${plural(result.unplanned.length, 'task')} left out; ${km(summary?.total_distance_m ?? 0)}, ${hours(summary?.total_duration_s ?? 0)} in all.`;
  $('planner-routes').replaceChildren(
    ...result.runsheets.map((r, i) => {
      const row = text('tr', '', { 'data-runsheet': r.id });
      const name = text('td', '');
      name.append(text('span', '', { class: 'swatch', 'data-colour': i % PLAN_COLOURS.length }), text('span', r.name));
      row.append(
        name,
        text('td', r.driver_id ? driverName(r.driver_id) : '—'),
        text(
          'td',
          `${plural(r.stops.length, 'stop')}${insertion ? ` (+${plural(r.added?.length || 0, 'task')})` : ''}`,
          {
            class: 'num',
          },
        ),
        text('td', km(r.planned_distance_m), { class: 'num', 'data-km': (r.planned_distance_m / 1000).toFixed(1) }),
        text('td', hours(r.planned_duration_s), {
          class: 'num',
          'data-hours': (r.planned_duration_s / 3600).toFixed(1),
        }),
        text('td', `${clockTime(r.planned_start_utc)}–${clockTime(r.planned_end_utc)}`, { class: 'when' }),
      );
      return row;
    }),
  );
  $('planner-left-out').replaceChildren(
    ...(result.unplanned.length
      ? result.unplanned.map((left) => {
          const li = text('li', '', { 'data-task': left.task_id, 'data-code': left.code });
          li.append(text('strong', refOf(left.task_id)), text('span', ` · ${left.detail}`));
          return li;
        })
      : [text('li', 'None: every task is planned.', { class: 'muted' })]),
  );
  drawPlan(
    result.runsheets.map((r) => ({
      id: r.id,
      title: `${r.name}${r.driver_id ? ` · ${driverName(r.driver_id)}` : ''} · ${km(r.planned_distance_m)} · ${hours(r.planned_duration_s)}`,
      stops: r.stops,
    })),
  );
}

/** X31: the dry run under review applied exactly as answered; the planning's runsheets read again. */
async function applyReview(): Promise<void> {
  const review = planner.review;
  if (!review || planner.busy) return;
  planner.busy = true;
  setButtons();
  say('Applying…', 'pending');
  try {
    const { build, versionRev, planningId } = review;
    await api(`/v1/plannings/${enc(planningId)}/routes/${enc(build.id)}/apply`, {
      method: 'POST',
      body: JSON.stringify({ version_rev: versionRev }),
    });
    const result = build.result as BuildResult;
    const added = result.runsheets.reduce((n, r) => n + (r.added?.length || 0), 0);
    discard(
      build.kind === 'insertion'
        ? `Applied: ${plural(added, 'task')} added to ${plural(result.runsheets.length, 'runsheet')}.`
        : `Applied: ${plural(result.runsheets.length, 'runsheet')} added to the planning.`,
    );
    await loadPlannings();
    await readUnplanned();
  } catch (error) {
    say(`Refused: ${(error as Error).message}`, 'refused');
  } finally {
    planner.busy = false;
    setButtons();
    screen.renderAll();
  }
}

/** The review closed (its plan off the map), with `words` said. */
function discard(words: string): void {
  planner.review = null;
  renderReview();
  clearPlan();
  if (words) say(words);
}

function setButtons(): void {
  for (const id of ['planner-build', 'planner-insert', 'planner-apply', 'planner-discard'])
    $<HTMLButtonElement>(id).disabled = planner.busy;
}

/** A runsheet of the planning cancelled (X18 frees its tasks): the unplanned tasks read again when the panel is open. */
export async function plannerChanged(): Promise<void> {
  if (!$<HTMLDetailsElement>('planner').open) return;
  await readUnplanned().catch(() => {});
}

/** Signed out: nothing of the last session's plan kept. */
export function resetPlanner(): void {
  planner.planningId = '';
  planner.unplanned.clear();
  planner.known.clear();
  planner.reasons.clear();
  planner.review = null;
  $<HTMLDetailsElement>('planner').open = false;
  $('planner-review').hidden = true;
  $('planner-status').textContent = '';
  $('planner-unplanned').replaceChildren();
}
