/**
 * What the console works out from what it knows (no calls, no drawing but the small elements of a sentence): each
 * driver's state, which positions are stale, how each runsheet is said (its stops' standing: timeliness.ts), what needs
 * a person.
 */
import { $, clockTime, text } from './dom.ts';
import {
  type Driver,
  dismissed,
  driverName,
  drivers,
  now,
  type Pair,
  type Planning,
  plannings,
  type Runsheet,
  rsKey,
  type Severity,
  type Task,
  taskCache,
} from './state.ts';
import { standingCounts, standingOf, standingSentence, taskStopViews } from './timeliness.ts';

/** The board's groups, in the order a dispatcher works them. */
export const GROUPS = [
  ['unassigned', 'Unassigned'],
  ['offered', 'Offered'],
  ['open', 'Not offered yet'],
  ['assigned', 'Assigned'],
  ['in_progress', 'In progress'],
  ['completed', 'Completed'],
  ['cancelled', 'Cancelled'],
] as const satisfies readonly (readonly [Runsheet['status'], string])[];

export type DriverState = 'off_duty' | 'available' | 'offered' | 'on_runsheet';
export const DRIVER_STATES: Record<DriverState, string> = {
  off_duty: 'off duty',
  available: 'available',
  offered: 'offered',
  on_runsheet: 'on',
};
const OPEN_PAIR = new Set(['created', 'broadcasted']);
export const REASONS: Record<string, string> = {
  declined_by_driver: 'declined',
  assigned_to_other_driver: 'taken by another driver',
  expired: 'expired unanswered',
  driver_at_capacity: 'closed: the driver reached their limit',
  runsheet_cancelled: 'closed: runsheet cancelled',
  runsheet_removed: 'closed: runsheet removed',
  driver_removed: 'closed: driver removed',
};
const DEFAULT_LOCATION_AGE_S = 1800;

export const parametersOf = (planning: Planning | undefined) => ({
  maxAge: planning?.job?.max_location_age_s || DEFAULT_LOCATION_AGE_S,
  perDriver: planning?.job?.max_runsheets_per_driver || 1,
  ttl: planning?.job?.offer_ttl_s || 600,
});

/** How old a driver's last fix is, in seconds (Infinity without one). */
export const ageOf = (driver: Driver | undefined) =>
  driver?.location ? Math.max(0, (now() - Date.parse(driver.location.server_time)) / 1000) : Infinity;

/** The shortest `max_location_age_s` of the plannings the driver belongs to: past it, their position is stale. */
function staleAfter(driverId: string): number {
  let limit = Infinity;
  for (const p of plannings.values()) if (p.driverIds.has(driverId)) limit = Math.min(limit, parametersOf(p).maxAge);
  return limit === Infinity ? DEFAULT_LOCATION_AGE_S : limit;
}
export const isStale = (driver: Driver | undefined) =>
  driver?.location != null && ageOf(driver) > staleAfter(driver.id);

interface Activity {
  holding: Map<string, Runsheet>;
  offered: Map<string, Runsheet>;
}
/**
 * Who holds which runsheet and who is offered one, in one pass over the plannings (a render asks it for every
 * driver); forgotten whenever what it is made of changes (`forgetActivity`).
 */
let activity: Activity | null = null;
export const forgetActivity = () => {
  activity = null;
};
function currentActivity(): Activity {
  const holding = new Map<string, Runsheet>();
  const offered = new Map<string, Runsheet>();
  for (const p of plannings.values()) {
    for (const r of p.runsheets.values())
      if (
        (r.status === 'assigned' || r.status === 'in_progress') &&
        r.assigned_driver &&
        !holding.has(r.assigned_driver.id)
      )
        holding.set(r.assigned_driver.id, r);
    for (const pair of p.pairs.values()) {
      if (!OPEN_PAIR.has(pair.state) || !pair.driver_id || offered.has(pair.driver_id)) continue;
      const r = pair.runsheet_id ? p.runsheets.get(pair.runsheet_id) : undefined;
      if (r && r.status === 'offered') offered.set(pair.driver_id, r);
    }
  }
  return { holding, offered };
}

/** What a driver is doing: holding a runsheet, offered one, off duty, or available (with the runsheet named). */
export function stateOf(driverId: string): { state: DriverState; runsheet?: Runsheet } {
  if (!activity) activity = currentActivity();
  const held = activity.holding.get(driverId);
  if (held) return { state: 'on_runsheet', runsheet: held };
  if (drivers.get(driverId)?.on_duty === false) return { state: 'off_duty' };
  const offered = activity.offered.get(driverId);
  if (offered) return { state: 'offered', runsheet: offered };
  return { state: 'available' };
}

export const seen = (driver: Driver) => {
  if (!driver.location) return 'no location';
  const age = ageOf(driver);
  if (age < 60) return 'seen just now';
  if (age < 3600) return `seen ${Math.floor(age / 60)} min ago`;
  return `seen ${Math.floor(age / 3600)} h ${Math.floor((age % 3600) / 60)} min ago`;
};

export const countdown = (iso: string, short = false) => {
  const left = Math.max(0, Math.round((Date.parse(iso) - now()) / 1000));
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}${short ? '' : ' left'}`;
};
/** A countdown the page keeps current every second (`tick`) without rebuilding what holds it. */
export const countdownSpan = (iso: string, short = false) =>
  text('span', countdown(iso, short), { class: 'countdown', 'data-expires': iso, 'data-short': String(short) });

/** The task's last event of `type` (its failure, its delivery). */
export const lastEventOf = (task: Task, type: string) => (task.timeline || []).findLast?.((e) => e.type === type);

/** A runsheet's standing from its tasks as X22 last answered them (none read: nothing to say). */
function standingOfListed(r: Runsheet, planningId: string) {
  const tasks = taskCache.get(rsKey(planningId, r.id))?.tasks;
  return tasks ? standingOf(taskStopViews(tasks)) : null;
}
/** The board's counters after a runsheet's sentence: " · 1 stop past its window · 3 at risk" (or nothing). */
function countersOf(r: Runsheet, planningId: string): string {
  const standing = standingOfListed(r, planningId);
  const counts = standing ? standingCounts(standing) : '';
  return counts ? ` · ${counts}` : '';
}

/** An element saying `sentence`; an offered runsheet's time left is a countdown kept current by `tick`. */
export function sentenceNode(
  tag: 'span',
  sentence: string,
  r: Runsheet,
  attrs: Record<string, unknown> = {},
): HTMLElement {
  const el = text(tag, sentence, attrs);
  if (r.status === 'offered' && r.offer_expires_at) {
    el.textContent = sentence.replace(/\d+:\d\d left$/, '');
    el.append(countdownSpan(r.offer_expires_at));
  }
  return el;
}

export function statusSentence(r: Runsheet, planningId: string): string {
  switch (r.status) {
    case 'unassigned':
      return r.unassigned_reason?.detail
        ? explainClosed(r.unassigned_reason.detail, r.id, planningId)
        : 'no driver took it';
    case 'offered':
      return r.offer_expires_at
        ? `wave ${r.wave} · ${r.offers_open} open · ${countdown(r.offer_expires_at)}`
        : `wave ${r.wave} · next wave coming`;
    case 'assigned':
      return `assigned ${clockTime(r.assigned_at)}${countersOf(r, planningId)}`;
    case 'in_progress':
      return `${r.tasks_done} of ${r.tasks_total} done${countersOf(r, planningId)}`;
    case 'completed':
      return `completed ${clockTime(r.completed_at)}`;
    case 'cancelled':
      return `cancelled${r.cancel_reason ? `: ${r.cancel_reason}` : ''}`;
    default:
      return `${r.tasks_total ?? ''} tasks, no job yet`;
  }
}

/** Why the system closed an offer, from the pair's reason (issue 46.5). */
const CLOSED_WHY: Record<string, string> = {
  driver_at_capacity: 'the driver reached their runsheet limit',
  assigned_to_other_driver: 'another driver won it',
  runsheet_cancelled: 'the runsheet was cancelled',
  runsheet_removed: 'the runsheet was removed',
  driver_removed: 'the driver was removed from the planning',
};

/**
 * The unassigned sentence's "N offers closed by the system" said with why, from the runsheet's closed offers: "1 offer
 * closed by the system because the driver reached their runsheet limit", "3 offers closed by the system: 2 because
 * another driver won it, 1 because the driver reached their runsheet limit".
 */
function explainClosed(detail: string, runsheetId: string, planningId: string): string {
  const why = new Map<string, number>();
  for (const pair of plannings.get(planningId)?.pairs.values() || []) {
    if (pair.runsheet_id !== runsheetId || !['rejected', 'withdrawn'].includes(pair.state)) continue;
    if (!pair.reason || pair.reason === 'declined_by_driver' || pair.reason === 'expired') continue;
    const words = CLOSED_WHY[pair.reason] || pair.reason.replace(/_/g, ' ');
    why.set(words, (why.get(words) || 0) + 1);
  }
  if (why.size === 0) return detail;
  const reasons = [...why].sort((a, b) => b[1] - a[1]);
  const because =
    reasons.length === 1
      ? ` because ${reasons[0]?.[0]}`
      : `: ${reasons.map(([words, n]) => `${n} because ${words}`).join(', ')}`;
  return detail.replace(/(\d+ offers? closed by the system|had the offer closed by the system)/, `$1${because}`);
}

const PAIR_WORDS: Record<string, string> = {
  created: 'to be offered',
  broadcasted: 'offered',
  accepted: 'accepted',
  rejected: 'declined',
  withdrawn: 'withdrew',
};
/** An offer's state as the detail says it. */
export function pairWords(pair: Pair): string {
  if (pair.state === 'rejected') {
    if (!pair.reason || pair.reason === 'declined_by_driver') return 'declined';
    return REASONS[pair.reason] || `closed: ${pair.reason.replace(/_/g, ' ')}`;
  }
  if (pair.state === 'accepted' && pair.action === 'assigned') return 'assigned by a dispatcher';
  return PAIR_WORDS[pair.state] || pair.state;
}

const filterValue = () => $<HTMLSelectElement>('planning-filter').value;
/** The plannings the filter shows that have runsheets. */
export const visiblePlannings = () =>
  [...plannings.values()].filter((p) => !filterValue() || p.id === filterValue()).filter((p) => p.runsheets.size);

export interface AttentionItem {
  kind: 'unassigned' | 'expiring' | 'failed_task' | 'late_stops' | 'stale_driver';
  planningId: string | null;
  runsheet: Runsheet;
  text: string;
  expires?: string;
  /** A failed task's, a runsheet's late stops': the dispatcher may mark it as seen (until it is worse). */
  key?: string;
  severity?: Severity;
  driverId?: string;
}

/** What needs a person now, most urgent first. */
export function attentionItems(): AttentionItem[] {
  const items: AttentionItem[] = [];
  const at = now();
  for (const p of visiblePlannings()) {
    const { ttl } = parametersOf(p);
    const soon = Math.min(120, Math.max(5, ttl * 0.3)) * 1000;
    for (const r of p.runsheets.values()) {
      const name = r.name || r.id;
      if (r.status === 'unassigned') {
        items.push({
          kind: 'unassigned',
          planningId: p.id,
          runsheet: r,
          text: `${name} · unassigned: ${statusSentence(r, p.id)}`,
        });
      }
      if (r.status === 'offered' && r.offer_expires_at && Date.parse(r.offer_expires_at) - at < soon) {
        items.push({
          kind: 'expiring',
          planningId: p.id,
          runsheet: r,
          text: `${name} · wave ${r.wave}: no answer, offer expires in `,
          expires: r.offer_expires_at,
        });
      }
      const tasks = taskCache.get(rsKey(p.id, r.id))?.tasks || [];
      const who = r.assigned_driver ? ` · ${driverName(r.assigned_driver.id)}` : '';
      const late = r.status === 'assigned' || r.status === 'in_progress' ? lateStopsItem(p.id, r, tasks, who) : null;
      if (late) items.push(late);
      for (const task of tasks) {
        if (task.status !== 'failed') continue;
        const key = `failed:${p.id}:${r.id}:${task.id}`;
        if (dismissed.has(key)) continue;
        const failure = lastEventOf(task, 'failed');
        const reason = failure?.failure_reason ? ` (${failure.failure_reason.replace(/_/g, ' ')})` : '';
        items.push({
          kind: 'failed_task',
          key,
          severity: { past: 0, stops: 0, worstS: 0 },
          planningId: p.id,
          runsheet: r,
          text: `${name} · task ${task.task_ref || task.id} failed${reason}${who}`,
        });
      }
    }
  }
  for (const driver of drivers.values()) {
    const { state, runsheet } = stateOf(driver.id);
    if (state !== 'on_runsheet' || !runsheet || !isStale(driver)) continue;
    items.push({
      kind: 'stale_driver',
      driverId: driver.id,
      runsheet,
      planningId: planningOf(runsheet),
      text: `${driverName(driver.id)} · ${seen(driver)} while on ${runsheet.name || runsheet.id}`,
    });
  }
  return items;
}

/**
 * Worse than when it was seen: more stops past their window, more past or at risk, or the worst stop at risk expected
 * 10 minutes later (a stop past its window grows older by the clock alone: that is not news).
 */
const WORSE_BY_S = 600;
const worseThan = (now: Severity, seen: Severity) =>
  now.past > seen.past || now.stops > seen.stops || now.worstS >= seen.worstS + WORSE_BY_S;

/**
 * A runsheet under way whose stops still to do are past their window or at risk: one item for them all, named by
 * the worst ("vanB-1: 4 stops at risk, worst LC-041 by 23 min"); hidden once seen, until it is worse.
 */
function lateStopsItem(planningId: string, r: Runsheet, tasks: Task[], who: string): AttentionItem | null {
  const standing = standingOf(taskStopViews(tasks), true);
  if (!standing.past && !standing.atRisk) return null;
  const severity: Severity = {
    past: standing.past,
    stops: standing.past + standing.atRisk,
    worstS: standing.worstAtRisk?.byS ?? 0,
  };
  const key = `late:${planningId}:${r.id}`;
  const seen = dismissed.get(key);
  if (seen && !worseThan(severity, seen)) return null;
  return {
    kind: 'late_stops',
    key,
    severity,
    planningId,
    runsheet: r,
    text: `${r.name || r.id}: ${standingSentence(standing)}${who}`,
  };
}

function planningOf(runsheet: Runsheet): string | null {
  for (const p of plannings.values()) if (p.runsheets.get(runsheet.id) === runsheet) return p.id;
  return null;
}
