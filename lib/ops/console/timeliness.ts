/**
 * Where each stop of a runsheet stands against its window and its plan, in the words docs/live-operations.md defines
 * (one definition each, used by the board's counters, the attention list and the detail alike):
 *
 * - **past its window** (the console's *late*): a stop not done by its window's end, or done after it;
 * - **at risk**: a stop not done whose window has not closed yet, and whose ETA lies after its window's end (X22's
 *   `late_by_s` > 0 for its task): it will be late unless something changes;
 * - **behind plan**: a built runsheet's stop expected a minute or more after its planned time (its ETA, or now when its
 *   planned time has passed and X22 has no ETA) yet inside its window: the plan slipped, the recipient has not.
 *
 * The ETAs are X22's (contract 4.11, shared/planning/etas.ts reckons them): this file only reads them against the
 * windows, the plan and the service's clock.
 *
 * Each stop's **progress** too: done, failed, to do, or **cancelled** (a drop-off whose task failed at its pickup: it
 * will not happen, so it is not to do; the ETAs count it done alike, `remainingStops`, and the contract's 4.11: both
 * stops are done once the task failed).
 */
import { now, type PlannedStop, type Runsheet, stopsOf, type Task, tasksOf } from './state.ts';

export type StopKind = 'pickup' | 'dropoff';
export type StopStanding = 'past_window' | 'at_risk' | 'behind_plan' | 'on_time' | 'done';
/** Where the stop's work is: `cancelled` is a drop-off whose task failed at its pickup. */
export type StopProgress = 'to_do' | 'done' | 'failed' | 'cancelled';
/** A stop's progress as the detail says it. */
export const PROGRESS_WORDS: Record<StopProgress, string> = {
  to_do: 'to do',
  done: 'done',
  failed: 'failed',
  cancelled: 'cancelled: the pickup failed',
};

/** Less than this after its planned time, a stop is on plan (ETAs move by seconds with every fix). */
const BEHIND_PLAN_FROM_S = 60;

/** A stop as the console shows it: its window, planned time and ETA side by side, and where it stands. */
export interface StopView {
  task: Task;
  kind: StopKind;
  windowStart: string | null;
  windowEnd: string | null;
  planned: string | null;
  eta: string | null;
  /** Not to do any more: done, failed, or cancelled by its task's failed pickup. */
  done: boolean;
  progress: StopProgress;
  /** The stop's address as a dispatcher reads it: "12 Kent Rd, Singapore" (empty without one). */
  address: string;
  /** Where it is on the map: a built stop's own coordinates, else its address's; null without them. */
  at: [number, number] | null;
  standing: StopStanding;
  /** Seconds: past its window's end (past its window, at risk) or after its planned time (behind plan); else 0. */
  byS: number;
  /** A built stop's leg from the previous stop, metres. */
  distanceM?: number;
}

const ms = (iso: string | null | undefined) => (iso ? Date.parse(iso) : Number.NaN);

/**
 * The stop's progress from its task's status and timeline (a task fails from `pending`, its pickup failed, or from
 * `picked_up`, its drop-off failed), and when it ended: the event's time, null while it is to do or when it was
 * cancelled (it never happened: it cannot be late).
 */
function progressOf(task: Task, kind: StopKind): { progress: StopProgress; at: string | null } {
  const events = task.timeline || [];
  const last = (type: string) => events.findLast?.((e) => e.type === type)?.happened_at_utc ?? '';
  const pickedUp = events.some((e) => e.type === 'picked_up');
  const pickup = kind === 'pickup';
  switch (task.status) {
    case 'delivered':
      return { progress: 'done', at: last(pickup ? 'picked_up' : 'delivered') };
    case 'failed':
      if (pickup)
        return pickedUp ? { progress: 'done', at: last('picked_up') } : { progress: 'failed', at: last('failed') };
      return pickedUp ? { progress: 'failed', at: last('failed') } : { progress: 'cancelled', at: null };
    case 'picked_up':
      return pickup ? { progress: 'done', at: last('picked_up') } : { progress: 'to_do', at: null };
    default:
      return { progress: 'to_do', at: null };
  }
}

type Address = {
  street_address?: string | null;
  city?: string | null;
  latitude?: number | null;
  longitude?: number | null;
};
const addressWords = (address: Address | null | undefined) =>
  [address?.street_address, address?.city].filter(Boolean).join(', ');
const pointOf = (
  p: { latitude?: number | null; longitude?: number | null } | null | undefined,
): [number, number] | null =>
  typeof p?.latitude === 'number' && typeof p.longitude === 'number' ? [p.latitude, p.longitude] : null;

/** Where one stop stands (the definitions above), with its window, planned time, ETA, progress and address. */
export function stopView(task: Task, kind: StopKind, built?: PlannedStop): StopView {
  const pickup = kind === 'pickup';
  const window = pickup ? task.from_time_window : task.to_time_window;
  const address = (pickup ? task.from_address : task.to_address) as Address | null | undefined;
  const { progress, at: endedAt } = progressOf(task, kind);
  const distanceM = built?.distance_from_previous_m;
  const view: StopView = {
    task,
    kind,
    windowStart: window?.start_time_utc ?? null,
    windowEnd: window?.end_time_utc ?? null,
    planned: (pickup ? task.planned_pickup_utc : task.planned_dropoff_utc) ?? null,
    eta: (pickup ? task.eta_pickup_utc : task.eta_dropoff_utc) ?? null,
    done: progress !== 'to_do',
    progress,
    address: addressWords(address),
    at: pointOf(built) ?? pointOf(address),
    standing: 'on_time',
    byS: 0,
    ...(distanceM == null ? {} : { distanceM }),
  };
  const end = ms(view.windowEnd);
  const at = now();
  if (view.done) {
    const when = ms(endedAt);
    const late = Number.isFinite(end) && when > end;
    return { ...view, standing: late ? 'past_window' : 'done', byS: late ? Math.ceil((when - end) / 1000) : 0 };
  }
  if (at > end) return { ...view, standing: 'past_window', byS: Math.ceil((at - end) / 1000) };
  const eta = ms(view.eta);
  if ((task.late_by_s ?? 0) > 0 && eta > end)
    return { ...view, standing: 'at_risk', byS: Math.ceil((eta - end) / 1000) };
  const planned = ms(view.planned);
  const expected = Number.isFinite(eta) ? eta : planned < at ? at : Number.NaN;
  const behind = (expected - planned) / 1000;
  if (behind >= BEHIND_PLAN_FROM_S) return { ...view, standing: 'behind_plan', byS: Math.round(behind) };
  return view;
}

/**
 * A runsheet's stops in the order its driver takes them: a built runsheet's `stops[]` (its planned order, then any
 * task it does not name), any other's tasks in order, each task's pickup before its drop-off. Done stops included.
 */
export function stopViews(r: Runsheet): StopView[] {
  const tasks = tasksOf(r);
  const byId = new Map(tasks.map((task) => [task.id, task]));
  const named = new Set<string>();
  const views: StopView[] = [];
  for (const stop of stopsOf(r)) {
    const task = byId.get(stop.task_id);
    if (!task) continue;
    named.add(task.id);
    views.push(stopView(task, stop.kind, stop));
  }
  views.push(...taskStopViews(tasks.filter((task) => !named.has(task.id))));
  return views;
}

/** Each task's pickup then its drop-off (a runsheet's stops where their order does not matter: its counts). */
export const taskStopViews = (tasks: readonly Task[]) =>
  tasks.flatMap((task) => [stopView(task, 'pickup'), stopView(task, 'dropoff')]);

/** A task is late when one of its stops is past its window. */
export const isLate = (task: Task) => taskStopViews([task]).some((view) => view.standing === 'past_window');

/** How a runsheet stands: its stops counted by standing, and the worst stop past its window and at risk. */
export interface Standing {
  past: number;
  atRisk: number;
  behind: number;
  worstPast: StopView | undefined;
  worstAtRisk: StopView | undefined;
}

/** `stillToDo`: only the stops not done (what needs a person); else a stop done after its window counts too. */
export function standingOf(views: readonly StopView[], stillToDo = false): Standing {
  const counted = stillToDo ? views.filter((v) => !v.done) : views;
  const of = (standing: StopStanding) => counted.filter((v) => v.standing === standing);
  const worst = (standing: StopStanding) => of(standing).sort((a, b) => b.byS - a.byS)[0];
  return {
    past: of('past_window').length,
    atRisk: of('at_risk').length,
    behind: of('behind_plan').length,
    worstPast: worst('past_window'),
    worstAtRisk: worst('at_risk'),
  };
}

/** Minutes as a dispatcher reads a lateness: rounded up, never "0 min". */
export const minutes = (seconds: number) => `${Math.max(1, Math.ceil(seconds / 60))} min`;
const stopsWord = (n: number) => `${n} stop${n === 1 ? '' : 's'}`;

/** The board's counters: "1 stop past its window · 3 at risk · 5 behind plan" (empty when all is well). */
export function standingCounts(standing: Standing): string {
  const parts: string[] = [];
  if (standing.past) parts.push(`${stopsWord(standing.past)} past ${standing.past === 1 ? 'its' : 'their'} window`);
  if (standing.atRisk) parts.push(`${standing.atRisk} at risk`);
  if (standing.behind) parts.push(`${standing.behind} behind plan`);
  return parts.join(' · ');
}

/** What the attention list says of it: "4 stops at risk, worst LC-041 by 23 min" (empty when nothing needs a person). */
export function standingSentence(standing: Standing): string {
  const ref = (v: StopView) => v.task.task_ref || v.task.id;
  const parts: string[] = [];
  if (standing.worstPast)
    parts.push(
      `${stopsWord(standing.past)} past ${standing.past === 1 ? 'its' : 'their'} window, worst ${ref(standing.worstPast)} by ${minutes(standing.worstPast.byS)}`,
    );
  if (standing.worstAtRisk)
    parts.push(
      `${stopsWord(standing.atRisk)} at risk, worst ${ref(standing.worstAtRisk)} by ${minutes(standing.worstAtRisk.byS)}`,
    );
  return parts.join('; ');
}

/** What one stop's standing says in the detail. */
export function standingWords(view: StopView): string {
  switch (view.standing) {
    case 'past_window':
      return `past its window by ${minutes(view.byS)}`;
    case 'at_risk':
      return `at risk by ${minutes(view.byS)}`;
    case 'behind_plan':
      return `${minutes(view.byS)} behind plan`;
    case 'done':
      return 'done';
    default:
      return view.eta ? 'on time' : '';
  }
}
