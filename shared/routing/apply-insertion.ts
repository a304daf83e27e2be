/**
 * Applies an insertion (X30, contract 4.11) from its stored result alone, so that a dry run's result can be applied
 * later as it was answered (X31): one change of the planning, as X23's apply (apply.ts) makes it, and never half of one.
 * - the runsheets added to are read first (consistently): one gone, or a task of the result gone, refuses the apply
 *   before anything is written (`planning_changed`); a change of the planning after that read moves its version, so
 *   the next step refuses it too;
 * - the planning's version moves from the one the build was asked against, naming the build (`takePlanning`): a
 *   stale one fails the build with `planning_changed`, and a rerun of the same build finds its own name and finishes;
 * - the tasks are marked as in their runsheets (`claimTasks`: one taken meanwhile undoes them all, nothing written);
 * - from here on nothing refuses: what is left is written whole, by this run, a rerun, X31's retry with its
 *   Idempotency-Key, or the settling of a run that failed for good (`settleFailedInsertion` finishes it). Each runsheet
 *   added to is written whole: its tasks with the added ones after them (their planned times with them), its `stops[]`
 *   the stops done as they were followed by the result's remaining stops (a rerun writes the same item again); its
 *   ETAs, computed from it as X22 is read (planning/etas.ts), follow the new order at once; open offers of it read its
 *   tasks from it (their pairs refer to it: offered-runsheets.ts) and show the new tasks;
 * - new runsheets (`vehicles[]`) are added as X23 adds its own, a vehicle's driver assigned;
 * - the assigned driver of each runsheet added to hears `runsheet.updated` on `user.<id>`.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, getAll, isConditionalFailure, mainTableName } from '#shared/db/client';
import { importedTask, releaseTask, taskKey } from '#shared/imports/tasks';
import { logger } from '#shared/log';
import { type Announcement, frame, publish } from '#shared/planning/announcements';
import { dispatchRecords, type RunsheetStatusView } from '#shared/planning/dispatch-records';
import { assignKey, runsheetKey } from '#shared/planning/keys';
import {
  findPlanning,
  type Planning,
  type Runsheet,
  runsheetTasksOf,
  storedRunsheetTasks,
} from '#shared/planning/planning-records';
import {
  type ApplyHold,
  addBuiltRunsheets,
  assignDrivers,
  builtRunsheets,
  claimTasks,
  loadBuildTasks,
  planningChanged,
  takePlanning,
} from '#shared/routing/apply';
import { type RouteBuild, readResult } from '#shared/routing/builds';
import { builtRunsheetId } from '#shared/routing/keys';
import { type LiveRoute, liveTravel } from '#shared/routing/live';
import { type BuildTask, expandVehicles } from '#shared/routing/problem';
import type { BuildResult } from '#shared/routing/schemas';
import type { TravelSettings } from '#shared/routing/travel';
import { travelModel } from '#shared/routing/travel-model';

type BuiltRunsheet = BuildResult['runsheets'][number];

/** The result's new runsheets (its `vehicles[]`'), apart from the live ones it added to. */
export function splitInsertion(build: RouteBuild, result: BuildResult) {
  const fresh = new Set(expandVehicles(build.request.vehicles).map((v) => builtRunsheetId(build.id, v.id)));
  return {
    changed: result.runsheets.filter((r) => !fresh.has(r.id)),
    fresh: result.runsheets.filter((r) => fresh.has(r.id)),
  };
}

const stopKey = (stop: Record<string, unknown>) => `${String(stop['task_id'])}:${String(stop['kind'])}`;

/** The runsheet item with the result's tasks added and its stops left replaced (see the module's note). */
function withAdded(
  item: Record<string, unknown>,
  built: BuiltRunsheet,
  tasks: Map<string, BuildTask>,
  travel: TravelSettings,
) {
  const planned = new Map<string, { pickup?: string; dropoff?: string }>();
  for (const stop of built.stops) {
    const times = planned.get(stop.task_id) ?? {};
    times[stop.kind] = stop.start_utc;
    planned.set(stop.task_id, times);
  }
  const left = new Set(built.stops.map((stop) => stopKey(stop)));
  const done = ((item['stops'] as Record<string, unknown>[] | undefined) ?? []).filter(
    (stop) => !left.has(stopKey(stop)),
  );
  const held = (item['task_ids'] as string[] | undefined) ?? [];
  const holds = new Set(held);
  // A task gone since it was claimed (its import deleted) is left out: there is nothing of it to add.
  const adding = (built.added ?? []).filter((id) => !holds.has(id) && tasks.has(id));
  const retimed = runsheetTasksOf(item).map((task) => {
    const times = planned.get(String(task['id']));
    if (!times || !('planned_pickup_utc' in task)) return task;
    return {
      ...task,
      ...(times.pickup ? { planned_pickup_utc: times.pickup } : {}),
      ...(times.dropoff ? { planned_dropoff_utc: times.dropoff } : {}),
    };
  });
  const added = adding.map((id) => {
    const task = tasks.get(id)!;
    return {
      ...importedTask(task.item),
      planned_pickup_utc: planned.get(id)?.pickup ?? null,
      planned_dropoff_utc: planned.get(id)?.dropoff ?? null,
    };
  });
  const taskIds = [...held, ...adding];
  return {
    ...item,
    tasks: storedRunsheetTasks({ tasks: [...retimed, ...added], task_ids: taskIds }),
    task_ids: taskIds,
    stops: [...done, ...built.stops],
    travel: item['travel'] ?? { ...travel, model: travelModel() },
  };
}

/** The runsheets an insertion adds to, as stored now (consistently), by id. */
async function changedItems(planId: string, changed: BuiltRunsheet[]) {
  const items = await getAll(
    mainTableName(),
    changed.map((r) => runsheetKey(planId, r.id)),
    { ConsistentRead: true },
  );
  return new Map(items.map((item) => [String(item['id']), item]));
}

/** Applies the insertion's result (see the module's note); `hold`: applied by X31 from a dry run (apply.ts `ApplyHold`). */
export async function applyInsertion(
  build: RouteBuild,
  result: BuildResult,
  tasks: Map<string, BuildTask>,
  travel: TravelSettings = build.request.travel,
  hold?: ApplyHold,
): Promise<void> {
  const { changed, fresh } = splitInsertion(build, result);
  const items = await changedItems(build.planning_id, changed);
  const freshRunsheets = builtRunsheets({ ...result, runsheets: fresh }, tasks);
  const growth: Runsheet[] = changed.map((r) => ({
    id: r.id,
    tasks: (r.added ?? []).flatMap((id) => (tasks.get(id) ? [importedTask(tasks.get(id)!.item)] : [])),
  }));
  const planning = await takePlanning(build, [...freshRunsheets, ...growth], hold, () => {
    // Judged before anything is written: afterwards nothing may refuse (the module's note).
    const gone = changed.find((r) => !items.has(r.id));
    if (gone) throw planningChanged(`runsheet ${gone.id} was taken out after the tasks were placed: nothing was added`);
    const lost = result.runsheets.flatMap((r) => r.added ?? []).find((id) => !tasks.has(id));
    if (lost) throw planningChanged(`task ${lost} is no longer there to add: nothing was added`);
  });
  await claimTasks(planning, [...changed.map((r) => ({ id: r.id, task_ids: r.added ?? [] })), ...freshRunsheets]);
  await writeInsertion(build, planning, result, tasks, travel, items);
}

/**
 * What an insertion writes once its tasks are claimed (see the module's note): whole, and the same again on a rerun.
 * `items`: the runsheets added to as read before the planning was taken (a rerun reads them again).
 */
async function writeInsertion(
  build: RouteBuild,
  planning: Planning,
  result: BuildResult,
  tasks: Map<string, BuildTask>,
  travel: TravelSettings,
  items?: Map<string, Record<string, unknown>>,
): Promise<void> {
  const { changed, fresh } = splitInsertion(build, result);
  const current = items ?? (await changedItems(planning.id, changed));
  for (const built of changed) {
    const found = current.get(built.id);
    if (!found) {
      // Taken out by a P6 after this insertion took the planning: its tasks are in no runsheet again.
      await Promise.all((built.added ?? []).map((id) => releaseTask(build.org_id, planning.id, built.id, id)));
      logger.warn('an insertion’s runsheet was taken out before its tasks were written', {
        build_id: build.id,
        runsheet_id: built.id,
      });
      continue;
    }
    const item = withAdded(found, built, tasks, travel);
    await db().send(new PutCommand({ TableName: mainTableName(), Item: item }));
    await recountStarted(planning.id, built.id, (item.task_ids as string[]).length);
  }
  if (fresh.length > 0) {
    const freshRunsheets = builtRunsheets({ ...result, runsheets: fresh }, tasks);
    await addBuiltRunsheets(build, planning, freshRunsheets, { ...result, runsheets: fresh }, travel);
    await assignDrivers(build, { ...result, runsheets: fresh });
  }
  await tellDrivers(build, changed);
}

/** A runsheet under way counts its tasks on its claim (X22's `tasks_total`): the added ones with them. */
async function recountStarted(planId: string, runsheetId: string, total: number) {
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: assignKey(planId, runsheetId),
        UpdateExpression: 'SET tasks_total = :total',
        ConditionExpression: 'attribute_exists(started_at) AND attribute_not_exists(completed_at)',
        ExpressionAttributeValues: { ':total': total },
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}

/** `runsheet.updated` to the assigned driver of each runsheet added to (told by announcements.ts `publish`). */
async function tellDrivers(build: RouteBuild, changed: BuiltRunsheet[]) {
  if (changed.length === 0) return;
  const statusOf = await dispatchRecords(
    build.planning_id,
    changed.map((r) => r.id),
    true,
  );
  await publish(updatedAnnouncements(build, changed, statusOf));
}

/**
 * What an insertion tells (pure): `runsheet.updated` on the driver's channel for each runsheet added to that a driver
 * holds (assigned or under way), in the build's order, keyed once a build and runsheet.
 */
export function updatedAnnouncements(
  build: { id: string; planning_id: string },
  changed: readonly BuiltRunsheet[],
  statusOf: (runsheetId: string) => RunsheetStatusView,
): Announcement[] {
  return changed.flatMap((built) => {
    const status = statusOf(built.id);
    if (status.status !== 'assigned' && status.status !== 'in_progress') return [];
    return [
      frame(`user.${status.assigned_driver.id}`, 'runsheet.updated', {
        key: `${build.id}:${built.id}:updated`,
        data: {
          planning_id: build.planning_id,
          runsheet_id: built.id,
          route_build_id: build.id,
          added: built.added ?? [],
          stops: built.stops.map((stop) => ({ task_id: stop.task_id, kind: stop.kind })),
        },
      }),
    ];
  });
}

/**
 * What an insertion that ends `failed` leaves (apply.ts `settleFailedApply` for X23's). Its apply refuses only before
 * anything is written (the module's note), so:
 * - every added task marked as in its runsheet (the claims were made; a write, a count or a telling may be left): the
 *   apply is finished from the stored result, as a rerun would, and the build is rather `completed` (answers true);
 * - else the claims were undone, or never made: a task still marked as in one of its runsheets that does not hold it
 *   (a claim left by a run that died while undoing them) is freed; nothing was written (answers false).
 */
export async function settleFailedInsertion(build: RouteBuild): Promise<boolean> {
  if (build.request.dry_run) return false;
  const result = await readResult(build);
  const planning = await findPlanning(build.planning_id, true);
  if (!result || result.runsheets.length === 0 || planning?.route_build !== build.id) return false;
  const ours = new Set(result.runsheets.map((r) => r.id));
  const added = result.runsheets.flatMap((r) => (r.added ?? []).map((taskId) => ({ runsheetId: r.id, taskId })));
  const marks = await getAll<{ id: string; planning_id?: string; runsheet_id?: string }>(
    mainTableName(),
    added.map((a) => taskKey(a.taskId)),
    { ConsistentRead: true, ProjectionExpression: 'id, planning_id, runsheet_id' },
  );
  const markOf = new Map(marks.map((m) => [m.id, m]));
  const claimed = added.every(
    (a) => markOf.get(a.taskId)?.planning_id === planning.id && markOf.get(a.taskId)?.runsheet_id === a.runsheetId,
  );
  if (claimed) {
    const tasks = await loadBuildTasks(
      added.map((a) => a.taskId),
      true,
    );
    const { changed } = splitInsertion(build, result);
    const items = await changedItems(planning.id, changed);
    // The travel its run drove with: the runsheets' own when they agree (live.ts), else the build's.
    const travel = build.request.dry_run
      ? build.request.travel
      : liveTravel([...items.values()].map((item) => ({ travel: item['travel'] }) as LiveRoute));
    await writeInsertion(build, planning, result, new Map(tasks.map((t) => [String(t.item['id']), t])), travel, items);
    logger.info('a failed insertion’s apply finished', { build_id: build.id });
    return true;
  }
  const items = await getAll<{ id: string; task_ids?: string[] }>(
    mainTableName(),
    [...ours].map((id) => runsheetKey(planning.id, id)),
    { ConsistentRead: true, ProjectionExpression: 'id, task_ids' },
  );
  const holds = new Map(items.map((item) => [item.id, new Set(item.task_ids ?? [])]));
  const held = marks.filter(
    (t) =>
      t.planning_id === planning.id && ours.has(String(t.runsheet_id)) && !holds.get(String(t.runsheet_id))?.has(t.id),
  );
  for (const t of held) await releaseTask(build.org_id, planning.id, String(t.runsheet_id), t.id);
  if (held.length > 0)
    logger.info('a failed insertion’s marks undone', { build_id: build.id, tasks_freed: held.length });
  return false;
}
