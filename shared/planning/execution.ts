/**
 * Executing a runsheet (contract 4.8): its driver reports each task (X20), everyone watching sees it, X22 reads it.
 *
 * A task's progress is an item of the plan's partition (`BPLAN#<plan>#<n> / PROGRESS#<runsheet>#<task>`: `status`,
 * `timeline[]`, `rev`); the runsheet's progress lives on its claim (`ASSIGN#<runsheet>`: `started_at`, `tasks_done`,
 * `tasks_total`, `completed_at`, `events`), which only the assigned driver's events write. Every event is one
 * transaction over the task's item (condition: its `rev`), the claim (condition: still this driver's, and its `events`
 * count as read) and the runsheet's offer group (condition: not cancelled), so the events of one runsheet are judged
 * one at a time in arrival order: of two concurrent events the later is judged again against what the first wrote,
 * and nothing is lost. The machine itself is data (`TASK_MOVES` in lifecycle.ts, beside the pair's and the runsheet's).
 * X22 adds the runsheet's live ETAs (4.11), reckoned by etas.ts as it is read; each event checks the runsheet's
 * stops at risk (late-risk.ts).
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { clock, toUtcIso } from '#shared/clock';
import { cancelledIndexes, db, getAll, isConditionalFailure, mainTableName, transactWrite } from '#shared/db/client';
import { conflict, invalidAt, notFound } from '#shared/errors';
import { currentFixes } from '#shared/locations/positions';
import { publish } from '#shared/planning/announcements';
import { type Assignment, dispatchRecords, type RunsheetStatusView } from '#shared/planning/dispatch-records';
import { runsheetEtas } from '#shared/planning/etas';
import {
  assignKey,
  driverCompletedRunsheetsPartition,
  driverRunsheetPrefix,
  driverRunsheetsPartition,
  groupKey,
  planIdOf,
  progressKey,
} from '#shared/planning/keys';
import { checkRunsheetRisk } from '#shared/planning/late-risk';
import {
  isFinished,
  nextStatus,
  runsheetRefusal,
  type TaskEventType,
  type TaskStatus,
  taskRefusal,
} from '#shared/planning/lifecycle';
import { findPlanning, readRunsheetItem, visiblePlanning } from '#shared/planning/planning-records';
import { checkProofs, namingRefusal, namingWrites, proofViews } from '#shared/planning/proofs';
import { taskAnnouncements } from '#shared/planning/runsheet-moves';
import { ARRIVALS_LIMIT, type FAILURE_REASONS, TIMELINE_LIMIT } from '#shared/planning/schemas';

export type { TaskEventType, TaskStatus } from '#shared/planning/lifecycle';
export type FailureReason = (typeof FAILURE_REASONS)[number];

/**
 * A task's bounds (contract 4.8, issue 42 items 2 and 5): its timeline holds at most `TIMELINE_LIMIT` events, of
 * which at most `ARRIVALS_LIMIT` arrivals (past that, 409 `timeline_full`), so a task's item, a runsheet's X22 answer
 * and each event's cost stay small whatever a driver's app sends; an event happened within `CLOCK_SKEW_MS` before
 * the runsheet was assigned and no later than `CLOCK_SKEW_MS` past the server's clock, and never before the task's
 * previous status event (a 400 at `happened_at_utc`).
 */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;

export interface TimelineEntry {
  type: TaskEventType;
  status: TaskStatus;
  happened_at_utc: string;
  saved_at_utc: string;
  latitude?: number;
  longitude?: number;
  failure_reason?: FailureReason;
  note?: string;
  recipient_name?: string;
  proof_ids?: string[];
}

interface Progress {
  status: TaskStatus;
  timeline: TimelineEntry[];
  rev: number;
}

export interface TaskEvent {
  type: TaskEventType;
  happened_at_utc: string;
  latitude?: number | undefined;
  longitude?: number | undefined;
  failure_reason?: FailureReason | undefined;
  note?: string | undefined;
  recipient_name?: string | undefined;
  proof_ids?: string[] | undefined;
}

const PENDING: Progress = { status: 'pending', timeline: [], rev: 0 };

/** The timeline in the order events happened, ties by arrival (as a pair's `statuses[]`). */
const inHappenedOrder = (timeline: TimelineEntry[], entry: TimelineEntry) => {
  const at = timeline.findIndex((e) => e.happened_at_utc > entry.happened_at_utc);
  return at < 0 ? [...timeline, entry] : [...timeline.slice(0, at), entry, ...timeline.slice(at)];
};

/** The rules of an event's fields that its schema alone cannot say (a 400 at the field). */
function checkFields(event: TaskEvent) {
  if (event.type === 'failed' && !event.failure_reason) {
    throw invalidAt('failure_reason', 'is required for a failed event');
  }
  if (event.type !== 'failed' && event.failure_reason) {
    throw invalidAt('failure_reason', 'is only for a failed event');
  }
  if (event.failure_reason === 'other' && !event.note) {
    throw invalidAt('note', 'is required when failure_reason is other: say what happened');
  }
  if (event.proof_ids?.length && event.type !== 'delivered' && event.type !== 'failed') {
    throw invalidAt('proof_ids', 'only a delivered or failed event carries proofs');
  }
  if ((event.latitude === undefined) !== (event.longitude === undefined)) {
    throw invalidAt(event.latitude === undefined ? 'latitude' : 'longitude', 'give latitude and longitude together');
  }
}

type Task = Record<string, unknown> & { id: string };

/** A runsheet the driver holds, found by its id alone (unique within a planning): its planning and claim. */
async function heldRunsheet(caller: Caller, runsheetId: string) {
  const prefix = driverRunsheetPrefix(runsheetId);
  const query = async (partition: string) =>
    (
      await db().send(
        new QueryCommand({
          TableName: mainTableName(),
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :rs)',
          ExpressionAttributeValues: { ':pk': partition, ':rs': prefix },
          ProjectionExpression: 'PK, SK',
        }),
      )
    ).Items ?? [];
  // The runsheets under way first; a completed one (its events can only be repeats now) only when none is.
  const find = async () => {
    const underWay = await query(driverRunsheetsPartition(caller.id));
    return underWay.length > 0 ? underWay : query(driverCompletedRunsheetsPartition(caller.id));
  };
  // A GSI is eventually consistent: a runsheet won a moment ago may not be listed yet (in the cloud, typically well
  // under a second). Asked again twice, a quarter and half a second later, before the answer is 404: at most three
  // looks for an id the driver does not hold.
  let found = await find();
  for (let attempt = 1; found.length === 0 && attempt <= 2; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    found = await find();
  }
  const keys = found.map((item) => ({ PK: String(item['PK']), SK: String(item['SK']) }));
  if (keys.length === 0) throw notFound('runsheet');
  const claims = await getAll<Assignment & { PK: string }>(mainTableName(), keys, { ConsistentRead: true });
  // The same runsheet id in two plannings, both won by this driver: the one under way, else the latest won.
  const held = claims
    .filter((claim) => claim.driver_id === caller.id)
    .sort(
      (a, b) =>
        Number(Boolean(a.completed_at)) - Number(Boolean(b.completed_at)) || b.assigned_at.localeCompare(a.assigned_at),
    )[0];
  if (!held) throw notFound('runsheet');
  return { planId: planIdOf(held.PK), claim: held };
}

const taskWords = (task: Task) => `task ${String(task['task_ref'] ?? task.id)}`;
const taskView = (planId: string, runsheetId: string, taskId: string, progress: Progress) => ({
  task: {
    id: taskId,
    planning_id: planId,
    runsheet_id: runsheetId,
    status: progress.status,
    timeline: progress.timeline,
  },
});

const CONTENDED = 'the runsheet kept changing; retry';

/** The 400 of an event's time outside the runsheet's working window (contract 4.8). */
function checkWindow(happened: string, assignedAt: string) {
  const at = Date.parse(happened);
  const earliest = Date.parse(assignedAt) - CLOCK_SKEW_MS;
  if (at < earliest) {
    throw invalidAt(
      'happened_at_utc',
      `is before the runsheet was assigned (${assignedAt}, less 5 minutes for the phone's clock)`,
    );
  }
  if (at > clock.nowMs() + CLOCK_SKEW_MS) {
    throw invalidAt(
      'happened_at_utc',
      `is in the future (the server's clock says ${clock.nowIso()}; 5 minutes allowed)`,
    );
  }
}

/** What the task's timeline already forbids of this event: a time before its last status event, or no room left. */
function checkTimeline(task: Task, progress: Progress, type: TaskEventType, happened: string) {
  const previous = progress.timeline.filter((e) => e.type !== 'arrived').at(-1);
  if (previous && happened < previous.happened_at_utc) {
    throw invalidAt(
      'happened_at_utc',
      `is before the task's previous event (${previous.type} at ${previous.happened_at_utc}); events are reported in the order they happened`,
    );
  }
  const arrivals = progress.timeline.filter((e) => e.type === 'arrived').length;
  if (progress.timeline.length >= TIMELINE_LIMIT || (type === 'arrived' && arrivals >= ARRIVALS_LIMIT)) {
    throw conflict(
      type === 'arrived' && arrivals >= ARRIVALS_LIMIT
        ? `${taskWords(task)} was reported as arrived ${arrivals} times already (at most ${ARRIVALS_LIMIT})`
        : `${taskWords(task)} holds ${progress.timeline.length} events already (at most ${TIMELINE_LIMIT})`,
      'timeline_full',
    );
  }
}

/**
 * X20: the assigned driver reports a task's event. Anyone else (another driver, another organisation) gets a 404.
 * The same event again (same type and `happened_at_utc`) is recorded once and answered with `created: false`, and
 * announces nothing (its first arrival did): no frame, no webhook.
 */
export async function recordTaskEvent(caller: Caller, runsheetId: string, taskId: string, event: TaskEvent) {
  const { planId } = await heldRunsheet(caller, runsheetId);
  const runsheet = await readRunsheetItem(planId, runsheetId);
  const tasks = runsheet.tasks ?? [];
  const task = tasks.find((t) => t.id === taskId);
  if (!task) throw notFound('task');
  checkFields(event);
  const happened = toUtcIso(event.happened_at_utc);
  const eventKey = `${runsheetId}:${taskId}:${event.type}:${happened}`;
  let proofs: Awaited<ReturnType<typeof checkProofs>> | undefined;
  for (let attempt = 0; attempt < 8; attempt++) {
    const [claimOut, progressOut] = await Promise.all([
      db().send(
        new GetCommand({ TableName: mainTableName(), Key: assignKey(planId, runsheetId), ConsistentRead: true }),
      ),
      db().send(
        new GetCommand({
          TableName: mainTableName(),
          Key: progressKey(planId, runsheetId, taskId),
          ConsistentRead: true,
        }),
      ),
    ]);
    const claim = claimOut.Item as (Assignment & { events?: number; tasks_failed?: number }) | undefined;
    if (claim?.driver_id !== caller.id) throw notFound('runsheet');
    const progress = (progressOut.Item as Progress | undefined) ?? PENDING;
    if (progress.timeline.some((e) => e.type === event.type && e.happened_at_utc === happened)) {
      // Recorded already (a retry, perhaps of a request whose answer was lost): answered as it stands, announced
      // by its first arrival only.
      return { created: false, ...taskView(planId, runsheetId, taskId, progress) };
    }
    checkWindow(happened, claim.assigned_at);
    const to = nextStatus(progress.status, event.type);
    if (!to) throw taskRefusal({ words: taskWords(task), ...progress }, event.type);
    checkTimeline(task, progress, event.type, happened);
    proofs ??= await checkProofs(caller, event.proof_ids ?? []);
    const now = clock.nowIso();
    const entry: TimelineEntry = {
      type: event.type,
      status: to,
      happened_at_utc: happened,
      saved_at_utc: now,
      ...(event.latitude !== undefined ? { latitude: event.latitude, longitude: event.longitude! } : {}),
      ...(event.failure_reason ? { failure_reason: event.failure_reason } : {}),
      ...(event.note ? { note: event.note } : {}),
      ...(event.recipient_name ? { recipient_name: event.recipient_name } : {}),
      ...(event.proof_ids?.length ? { proof_ids: event.proof_ids } : {}),
    };
    const next: Progress = { status: to, timeline: inHappenedOrder(progress.timeline, entry), rev: progress.rev + 1 };
    const finishes = isFinished(to) && !isFinished(progress.status);
    const done = Number(claim.tasks_done ?? 0) + (finishes ? 1 : 0);
    const failed = Number(claim.tasks_failed ?? 0) + (finishes && to === 'failed' ? 1 : 0);
    const completes = done >= tasks.length && !claim.completed_at;
    const events = Number(claim.events ?? 0);
    try {
      await transactWrite([
        {
          Put: {
            TableName: mainTableName(),
            Item: {
              ...progressKey(planId, runsheetId, taskId),
              entity: 'task_progress',
              planning_id: planId,
              runsheet_id: runsheetId,
              task_id: taskId,
              ...next,
            },
            ConditionExpression: 'attribute_not_exists(PK) OR rev = :rev',
            ExpressionAttributeValues: { ':rev': progress.rev },
          },
        },
        {
          Update: {
            TableName: mainTableName(),
            Key: assignKey(planId, runsheetId),
            // A completed runsheet moves to the driver's list of completed ones and leaves the clock check's list of
            // runsheets under way (keys.ts).
            UpdateExpression: `SET events = :next, started_at = if_not_exists(started_at, :now), tasks_done = :done, tasks_failed = :failed, tasks_total = :total${completes ? ', completed_at = :now, GSI1PK = :completed REMOVE GSI3PK, GSI3SK' : ''}`,
            ConditionExpression: 'driver_id = :me AND (attribute_not_exists(events) OR events = :events)',
            ExpressionAttributeValues: {
              ':next': events + 1,
              ':now': now,
              ':done': done,
              ':failed': failed,
              ':total': tasks.length,
              ':me': caller.id,
              ':events': events,
              ...(completes ? { ':completed': driverCompletedRunsheetsPartition(caller.id) } : {}),
            },
          },
        },
        {
          ConditionCheck: {
            TableName: mainTableName(),
            Key: groupKey(planId, runsheetId),
            ConditionExpression: 'attribute_not_exists(cancelled)',
          },
        },
        ...namingWrites(caller, proofs, eventKey, now),
      ]);
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
      const cancelled = cancelledIndexes(error);
      if (cancelled.includes(2)) {
        throw runsheetRefusal('report', { id: runsheetId, name: runsheet.name, status: 'cancelled' });
      }
      const named = cancelled.filter((i) => i >= 3).map((i) => i - 3);
      if (named.length > 0) throw namingRefusal(named);
      continue; // another event of the runsheet came first: judge again against what it wrote
    }
    const after = {
      ...claim,
      tasks_done: done,
      tasks_failed: failed,
      tasks_total: tasks.length,
      ...(completes ? { completed_at: now } : {}),
    };
    await announce(planId, runsheet, task, caller, next, after, happened, event.type);
    // Contract 4.11: a stop done leaves the stops at risk (silently), and what follows it is reckoned again.
    const fix = (await currentFixes(caller.orgId ?? null, [caller.id])).get(caller.id);
    await checkRunsheetRisk(planId, runsheetId, caller.id, fix);
    return { created: true, ...taskView(planId, runsheetId, taskId, next) };
  }
  throw conflict(CONTENDED);
}

/**
 * The event on `planning.<id>` and to the organisation's partners, and `runsheet.completed` once every task is
 * delivered or failed (runsheet-moves.ts `taskAnnouncements`), told by the one publisher.
 */
async function announce(
  planId: string,
  runsheet: { id: string; name?: string; tasks?: Task[] },
  task: Task,
  caller: Caller,
  progress: Progress,
  claim: Assignment & { tasks_failed?: number },
  happened: string,
  type: TaskEventType,
) {
  const planning = await findPlanning(planId);
  if (!planning) return;
  const entry = progress.timeline.find((e) => e.type === type && e.happened_at_utc === happened)!;
  await publish(
    taskAnnouncements({
      planId,
      orgId: planning.org_id,
      runsheetId: runsheet.id,
      task,
      driver: { id: caller.id, name: claim.driver_name ?? '' },
      type,
      entry,
      claim,
    }),
  );
}

/**
 * X22: the runsheet with its status and its tasks in order, each with its status, timeline and proofs (signed GET
 * URLs), and while it is assigned or in progress its live ETAs (`liveEtas`). The planning's readers (of its
 * organisation) and the runsheet's assigned driver; anyone else a 404.
 */
export async function readRunsheet(caller: Caller, planId: string, runsheetId: string) {
  const isDriver = caller.roles.includes('Driver') || caller.roles.includes('OrgDriver');
  // Whose key the assigned driver's fix is under: the driver's own organisation, else the planning's (P7: its
  // drivers are the organisation's or freelance, and currentFixes looks under both).
  let fixOrg: string | null;
  if (isDriver) {
    const claim = (await db().send(new GetCommand({ TableName: mainTableName(), Key: assignKey(planId, runsheetId) })))
      .Item as Assignment | undefined;
    if (claim?.driver_id !== caller.id) throw notFound('runsheet');
    fixOrg = caller.orgId ?? null;
  } else {
    fixOrg = (await visiblePlanning(caller, planId)).org_id;
  }
  const runsheet = await readRunsheetItem(planId, runsheetId);
  const tasks = runsheet.tasks ?? [];
  const [statusOf, progresses] = await Promise.all([
    dispatchRecords(planId, [runsheetId]),
    getAll<Progress & { task_id: string }>(
      mainTableName(),
      [...new Set(tasks.map((t) => t.id))].map((id) => progressKey(planId, runsheetId, id)),
    ),
  ]);
  const progressOf = new Map(progresses.map((p) => [p.task_id, p]));
  const status = statusOf(runsheetId);
  const proofIds = progresses.flatMap((p) => p.timeline.flatMap((e) => e.proof_ids ?? []));
  const [proofs, etas] = await Promise.all([
    proofViews(proofIds),
    liveEtas(runsheet, status, fixOrg, (id) => progressOf.get(id)?.status ?? 'pending'),
  ]);
  return {
    runsheet: {
      id: runsheet.id,
      planning_id: planId,
      ...(runsheet.name !== undefined ? { name: runsheet.name } : {}),
      ...(runsheet.service_type !== undefined ? { service_type: runsheet.service_type } : {}),
      tasks_total: tasks.length,
      ...status,
      ...etas?.runsheet,
      tasks: tasks.map((task) => {
        const progress = progressOf.get(task.id) ?? PENDING;
        const named = progress.timeline.flatMap((e) => e.proof_ids ?? []);
        return {
          ...task,
          status: progress.status,
          timeline: progress.timeline,
          proofs: named.flatMap((id) => (proofs.has(id) ? [proofs.get(id)!] : [])),
          ...etas?.taskEtas(task.id),
        };
      }),
      ...(runsheet.stops ? { stops: runsheet.stops } : {}),
    },
    server_time: clock.nowIso(),
  };
}

/**
 * X22's live ETAs (contract 4.11; planning/etas.ts reckons them), computed as the runsheet is read: only for a
 * runsheet `assigned` or `in_progress` (any other has no ETA members: its `status` says why). One small read beyond
 * what X22 reads anyway: the assigned driver's last fix (a BatchGetItem of one or two keys, 0.5 RCU each), answered
 * with them (a tracking link shows it while its stop is next: shared/tracking/links.ts).
 */
export async function liveEtas(
  runsheet: Awaited<ReturnType<typeof readRunsheetItem>>,
  status: RunsheetStatusView,
  fixOrg: string | null,
  statusOf: (taskId: string) => TaskStatus,
) {
  if (status.status !== 'assigned' && status.status !== 'in_progress') return undefined;
  const driverId = status.assigned_driver.id;
  const fix = (await currentFixes(fixOrg, [driverId])).get(driverId);
  const etas = runsheetEtas({
    tasks: runsheet.tasks ?? [],
    stops: runsheet.stops,
    travel: runsheet.travel,
    statusOf,
    fix,
    nowMs: clock.nowMs(),
  });
  return { ...etas, fix };
}
