/**
 * The plannings shown: the newest with runsheets, each read whole once (P3: its drivers and job) and its statuses
 * (X14), offers (R2) and started runsheets' tasks and ETAs (X22, within a budget a minute) kept fresh, read again
 * shortly after its events.
 */
import { allPages, api, eachLimited, subscribe } from './api.ts';
import { renderFilter } from './board.ts';
import { enc } from './dom.ts';
import { learnDriver, locate } from './drivers.ts';
import { notifyHistory } from './notifications.ts';
import {
  type Answer,
  drivers,
  isSysAdmin,
  type ListedRunsheet,
  now,
  orgId,
  type Pair,
  plannings,
  roles,
  rsKey,
  screen,
  session,
  subscribed,
  taskCache,
  taskReadOf,
  view,
} from './state.ts';

const MAX_PLANNINGS = 20;
/** Channels one WebSocket connection may hold (contract 4.3). */
const CHANNELS_PER_CONNECTION = 20;

type PairRecord = Answer<'/v1/broadcast-plans/{plan_id}/pairs', 'get'>['pair_records'][number];

/**
 * The newest plannings with runsheets, each read whole once and its statuses kept fresh: as many as the connection
 * has channels for (20 a connection, contract 4.3, less the user's, the organisation's and SysAdmin's freelance
 * drivers'), so that every planning shown is live. One that falls out of them is dropped, and the connection opened
 * again without its channel.
 */
export async function loadPlannings(): Promise<void> {
  const org = orgId();
  const scoped = org && isSysAdmin() ? `&org_id=${enc(org)}` : '';
  const room = CHANNELS_PER_CONNECTION - (isSysAdmin() ? 3 : 2);
  const list = await api<Answer<'/v1/plannings', 'get'>>(`/v1/plannings?per_page=${MAX_PLANNINGS}${scoped}`);
  // An empty planning needs nobody.
  const newest = list.plannings.filter((p) => p.total_runsheets).slice(0, room);
  const kept = new Set(newest.map((p) => p.id));
  let dropped = false;
  for (const id of [...plannings.keys()])
    if (!kept.has(id)) {
      plannings.delete(id);
      dropped ||= subscribed.has(`planning.${id}`);
      if (view.selected?.planningId === id) screen.closeDetail();
    }
  if (dropped) session.socket?.close(); // its onclose connects again, subscribing to the plannings kept
  for (const p of newest) {
    const known = plannings.get(p.id);
    if (!known) {
      plannings.set(p.id, {
        id: p.id,
        name: p.name,
        driverIds: new Set(),
        job: null,
        runsheets: new Map(),
        pairs: new Map(),
        loaded: false,
      });
    } else known.name = p.name;
  }
  subscribe([...plannings.keys()].map((id) => `planning.${id}`));
  renderFilter();
  await eachLimited([...plannings.keys()], 3, (id) => loadPlanning(id));
  screen.renderAll();
}

/** One planning: P3 once (its drivers and job), X14's statuses, R2's offers, and the tasks of started runsheets. */
export async function loadPlanning(planningId: string): Promise<void> {
  const planning = plannings.get(planningId);
  if (!planning) return;
  if (!planning.loaded) {
    const whole = await api<Answer<'/v1/plannings/{planningID}', 'get'>>(`/v1/plannings/${enc(planningId)}`);
    planning.loaded = true;
    planning.name = whole.name;
    planning.job = whole.job || null;
    planning.driverIds = new Set((whole.drivers || []).map((d) => d.id));
    const unknown = [...planning.driverIds].filter((id) => !drivers.has(id));
    for (const d of whole.drivers || []) if (!drivers.has(d.id)) drivers.set(d.id, { id: d.id });
    await eachLimited(unknown, 6, async (id) => {
      if (roles().includes('OrgTransporter')) {
        const found = await api<Answer<'/v1/org/users/{userID}', 'get'>>(`/v1/org/users/${enc(id)}`).catch(() => null);
        if (found?.user) learnDriver(found.user);
      }
      await locate(id);
    });
  }
  // R2 (with every pair's tasks) is the heavy read: at first and after a reconnect (events may have been missed);
  // in between the pair events themselves keep the offers current.
  const readPairs = !planning.pairsRead || planning.pairsDirty;
  const [runsheets, records] = await Promise.all([
    allPages<ListedRunsheet>(`/v1/plannings/${enc(planningId)}/runsheets?per_page=200`, 'runsheets'),
    readPairs ? allPages<PairRecord>(`/v1/broadcast-plans/${enc(planningId)}/pairs`, 'pair_records') : null,
  ]);
  planning.runsheets = new Map(runsheets.map((r) => [r.id, r]));
  for (const r of runsheets) {
    const who = r.assigned_driver;
    if (who?.name && !drivers.get(who.id)?.name) learnDriver({ id: who.id, name: who.name });
  }
  if (records) {
    const firstRead = !planning.pairsRead;
    planning.pairsRead = true;
    planning.pairsDirty = false;
    planning.pairs = new Map(
      records.map((r): [string, Pair] => {
        const last = r.statuses[r.statuses.length - 1];
        if (r.pair.driver.name && !drivers.get(r.pair.driver.id)?.name)
          learnDriver({ id: r.pair.driver.id, name: r.pair.driver.name });
        return [
          r.id,
          {
            id: r.id,
            runsheet_id: r.pair.runsheet.id,
            driver_id: r.pair.driver.id,
            state: r.current_state,
            reason: last?.reason || null,
            action: last?.action,
            at: last?.happened_at_utc,
            first: r.statuses[0]?.happened_at_utc,
          },
        ];
      }),
    );
    // At sign-in, the planning's recent history fills "Latest events" (the live events then join it).
    if (firstRead) notifyHistory(planningId, records);
  }
  // Assigned and started runsheets: their tasks (X22), for failures, lateness and ETAs; read again when their status
  // or progress moves (a task event, `task.late_risk` and `task.back_on_time` drop them from the cache at once), and
  // their ETAs once a minute within a budget (etasDue).
  const moved = runsheets.filter((r) => {
    if (r.status !== 'assigned' && r.status !== 'in_progress' && r.status !== 'completed') return false;
    const cached = taskCache.get(rsKey(planningId, r.id));
    return !cached || cached.done !== r.tasks_done || cached.status !== r.status;
  });
  const stale = etasDue(planningId, runsheets, new Set(moved));
  await eachLimited([...moved.slice(0, 100), ...stale], 4, async (r) => {
    const found = await api<Answer<'/v1/plannings/{planningID}/runsheets/{runsheetID}', 'get'>>(
      `/v1/plannings/${enc(planningId)}/runsheets/${enc(r.id)}`,
    );
    taskCache.set(rsKey(planningId, r.id), taskReadOf(found.runsheet));
  });
  if (view.selected?.planningId === planningId) await screen.loadSelected();
}

/** ETAs move with the clock and the driver (contract 4.11): a runsheet's are read again once they are a minute old. */
const ETA_REFRESH_MS = 60_000;
/**
 * At most this many of those reads a minute, over every planning shown, the oldest first: a day of 200 runsheets under
 * way is 30 reads a minute (each runsheet's ETAs then at most about 7 minutes old), not 200.
 */
const ETA_READS_PER_MINUTE = 30;
/** When the last minute's ETA reads were made. */
const etaReads: number[] = [];

/**
 * The runsheets under way (not `moved`, which are read anyway) whose ETAs are due again: read a minute ago or more,
 * and with ETAs then or a fix of their driver since (a driver with no recent fix has none: nothing changes until a
 * fix comes). As many as the minute's budget leaves, the oldest read first.
 */
function etasDue(planningId: string, runsheets: ListedRunsheet[], moved: Set<ListedRunsheet>): ListedRunsheet[] {
  const at = now();
  while (etaReads.length && (etaReads[0] ?? 0) <= at - 60_000) etaReads.shift();
  const due = runsheets
    .filter((r) => (r.status === 'assigned' || r.status === 'in_progress') && !moved.has(r))
    .map((r) => ({ r, cached: taskCache.get(rsKey(planningId, r.id)) }))
    .filter(({ r, cached }) => {
      if (!cached || at - cached.readAt < ETA_REFRESH_MS) return false;
      const fixAt = Date.parse(drivers.get(r.assigned_driver?.id ?? '')?.location?.server_time ?? '');
      return cached.etas || fixAt > cached.readAt;
    })
    .sort((a, b) => (a.cached?.readAt ?? 0) - (b.cached?.readAt ?? 0))
    .slice(0, Math.max(0, ETA_READS_PER_MINUTE - etaReads.length))
    .map(({ r }) => r);
  for (const _ of due) etaReads.push(at);
  return due;
}

const reloads = new Map<string, ReturnType<typeof setTimeout>>();

/** A planning read again shortly after its events (a burst of events is one read). */
export function scheduleReload(planningId: string, delay: number): void {
  if (!plannings.has(planningId) || reloads.has(planningId)) return;
  reloads.set(
    planningId,
    setTimeout(async () => {
      reloads.delete(planningId);
      if (!session.signedIn) return;
      await loadPlanning(planningId).catch(() => {});
      screen.renderAll();
    }, delay),
  );
}

/** No reload pending (sign-out). */
export function cancelReloads(): void {
  for (const timer of reloads.values()) clearTimeout(timer);
  reloads.clear();
}
