/**
 * Adds a build's runsheets to its planning (contract 4.10), as P5 would add them: their tasks in pickup order (as
 * imported, with their planned times), the tasks marked, the planning's `version_rev` moved; each runsheet keeps its
 * `stops[]` and its build's `travel` (its ETAs drive with it, 4.11); a vehicle with a driver has its runsheet assigned
 * to them as X16 would.
 *
 * Exactly once, whoever runs it and however often: the first write is the planning's version moved from the one the
 * build was asked against, naming the build (`route_build`). Of two builds (or a build and a P5–P9) only one moves
 * it: the other finds the planning changed and adds nothing. A rerun of the same build (its worker died after that
 * write) finds its own name there and finishes the rest, whose every write is whole and keyed by the build. A build
 * that ends `failed` after its apply began has it undone (or, its runsheets all added, finished): `settleFailedApply`.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { db, getAll, mainTableName, type TransactItem } from '#shared/db/client';
import { PAGE_ANSWER_BUDGET_BYTES } from '#shared/db/paging';
import { conflict, isDomainError } from '#shared/errors';
import { jobKey } from '#shared/imports/jobs';
import { claimTask, importedTask, releaseTask, taskKey } from '#shared/imports/tasks';
import { logger } from '#shared/log';
import { assignRunsheet } from '#shared/planning/dispatch';
import { runsheetKey } from '#shared/planning/keys';
import { addMembers } from '#shared/planning/planning-members';
import {
  findPlanning,
  type Planning,
  planningContents,
  type Runsheet,
  storedRunsheetTasks,
} from '#shared/planning/planning-records';
import { changePlanning, planningBytes } from '#shared/planning/plannings';
import { type RouteBuild, readResult } from '#shared/routing/builds';
import type { StoredVehicle } from '#shared/routing/live';
import { type BuildTask, expandVehicles } from '#shared/routing/problem';
import type { BuildResult } from '#shared/routing/schemas';
import type { TravelSettings } from '#shared/routing/travel';
import { travelModel } from '#shared/routing/travel-model';

export const planningChanged = (detail: string) => conflict(detail, 'planning_changed');
export const planningTooLarge = (detail: string) => conflict(detail, 'planning_too_large');

/**
 * Tasks as imported, with their import jobs' service types, in the order of `ids` (a task gone is left out).
 * Eventually consistent unless `consistent`: what a build reads of a task (addresses, windows, loads) never changes
 * after its import completed; only its planned mark does, which the apply claims conditionally (X31 reads it
 * consistently to refuse a task planned since its dry run).
 */
export async function loadBuildTasks(ids: string[], consistent = false): Promise<BuildTask[]> {
  const items = await getAll(
    mainTableName(),
    ids.map((id) => taskKey(id)),
    consistent ? { ConsistentRead: true } : {},
  );
  const byId = new Map(items.map((item) => [String(item['id']), item]));
  const jobIds = [...new Set(items.map((item) => String(item['import_job_id'])))];
  const jobs = await getAll(mainTableName(), jobIds.map(jobKey), { ProjectionExpression: 'id, details' });
  const typeOf = new Map(
    jobs.map((job) => [String(job['id']), (job['details'] as { service_type?: string } | undefined)?.service_type]),
  );
  return ids.flatMap((id) => {
    const item = byId.get(id);
    if (!item) return [];
    return [{ item, serviceType: typeOf.get(String(item['import_job_id'])) }];
  });
}

/** The runsheets a result adds, as the planning stores them. */
export function builtRunsheets(result: BuildResult, tasks: Map<string, BuildTask>): Runsheet[] {
  return result.runsheets.map((built) => {
    const planned = new Map<string, { pickup?: string; dropoff?: string }>();
    for (const stop of built.stops) {
      const times = planned.get(stop.task_id) ?? {};
      times[stop.kind] = stop.start_utc;
      planned.set(stop.task_id, times);
    }
    // Pickup order: the order the stops first name each task.
    const order = [...planned.keys()];
    const types = new Set(order.map((id) => tasks.get(id)?.serviceType));
    const [only] = [...types];
    return {
      id: built.id,
      name: built.name,
      tasks: order.map((id) => ({
        ...importedTask(tasks.get(id)!.item),
        planned_pickup_utc: planned.get(id)!.pickup ?? null,
        planned_dropoff_utc: planned.get(id)!.dropoff ?? null,
      })),
      task_ids: order,
      ...(types.size === 1 && only ? { service_type: only } : {}),
      stops: built.stops,
    };
  });
}

/** Whether the planning, with these runsheets added, is still one P3 can answer (4.9). */
export async function fitsPlanning(planningId: string, runsheets: Runsheet[]): Promise<boolean> {
  const contents = await planningContents(planningId, true);
  return planningBytes([...contents.runsheets, ...runsheets], contents.drivers) <= PAGE_ANSWER_BUDGET_BYTES;
}

/**
 * What an apply outside the build's own run (X31: a dry run applied, apply-dry-run.ts) holds the build by: `items`
 * are written in the one transaction that moves the planning's version (the build marked applied, on the condition
 * that no other apply marked it), so of two applies exactly one moves it. `mayResume` is asked when the planning
 * names the build already (a retried apply): only the apply that holds the build goes on. `refused` is asked when the
 * transaction failed: it throws the answer when the build (not the planning) refused it.
 */
export interface ApplyHold {
  items: TransactItem[];
  mayResume: () => Promise<void>;
  refused: () => Promise<void>;
}

/**
 * Moves the planning's version from the build's, naming the build; a rerun finds it moved by itself already.
 * `judge`: what must hold before the planning is taken (not on a rerun, which finishes what its first run began).
 */
export async function takePlanning(
  build: RouteBuild,
  runsheets: Runsheet[],
  hold?: ApplyHold,
  judge?: () => void,
): Promise<Planning> {
  const planning = await findPlanning(build.planning_id, true);
  if (!planning) throw planningChanged('the planning was deleted while the routes were built');
  if (planning.route_build === build.id) {
    await hold?.mayResume();
    return planning;
  }
  judge?.();
  if (planning.version_rev !== build.base_rev)
    throw planningChanged(
      `the planning changed while the routes were built (version ${build.base_rev.split('-')[0]} then, ${planning.version_seq} now): nothing was added; build again`,
    );
  if (!(await fitsPlanning(planning.id, runsheets)))
    throw planningTooLarge(
      'these runsheets would make the planning larger than one planning may hold (P3’s answer): nothing was added; plan fewer tasks or use another planning',
    );
  try {
    return await changePlanning(planning, build.base_rev, { route_build: build.id }, hold?.items);
  } catch (error) {
    if (isDomainError(error, 'conflict')) {
      await hold?.refused();
      throw planningChanged('the planning changed while the routes were built: nothing was added; build again');
    }
    throw error;
  }
}

/** Marks each task as in its runsheet; a task taken meanwhile (a P5 between) undoes them all: nothing is added. */
export async function claimTasks(planning: Planning, runsheets: Pick<Runsheet, 'id' | 'task_ids'>[]) {
  const claims = runsheets.flatMap((r) => (r.task_ids ?? []).map((taskId) => ({ runsheetId: r.id, taskId })));
  let taken: string | undefined;
  for (let i = 0; i < claims.length && !taken; i += 25) {
    const settled = await Promise.allSettled(
      claims
        .slice(i, i + 25)
        .map((c) => claimTask(planning.org_id, planning.id, c.runsheetId, c.taskId, `task ${c.taskId}`)),
    );
    for (const outcome of settled)
      if (outcome.status === 'rejected') {
        // Taken meanwhile (claimTask's conflict); anything else (a task gone, a fault) is no race of this build's.
        if (!isDomainError(outcome.reason, 'conflict')) throw outcome.reason;
        taken ??= (outcome.reason as Error).message;
      }
  }
  if (!taken) return;
  for (let i = 0; i < claims.length; i += 25)
    await Promise.all(
      claims.slice(i, i + 25).map((c) => releaseTask(planning.org_id, planning.id, c.runsheetId, c.taskId)),
    );
  throw planningChanged(`a task was planned elsewhere while the routes were built (${taken}): nothing was added`);
}

/** Adds the runsheets (see the module's note); `hold`: an apply outside the build's run (X31, `ApplyHold`). */
export async function applyResult(
  build: RouteBuild,
  runsheets: Runsheet[],
  result: BuildResult,
  hold?: ApplyHold,
): Promise<void> {
  const planning = await takePlanning(build, runsheets, hold);
  await claimTasks(planning, runsheets);
  await addBuiltRunsheets(build, planning, runsheets, result);
  await assignDrivers(build, result);
}

/**
 * A built runsheet's vehicle as its item keeps it (X30 adds to the runsheet with it: live.ts), `count` expanded: the
 * entry of the result's `vehicle_id`.
 */
export function storedVehicle(build: RouteBuild, vehicleId: string): StoredVehicle | undefined {
  const found = expandVehicles(build.request.vehicles).find((v) => v.id === vehicleId);
  if (!found) return undefined;
  const { count: _count, driver_id: _driver, ...entry } = found.entry;
  return { ...entry, id: found.id };
}

/** Writes new built runsheets (X23's, and X30's new vehicles') with their build's travel and vehicle. */
export async function addBuiltRunsheets(
  build: RouteBuild,
  planning: Planning,
  runsheets: Runsheet[],
  result: BuildResult,
  travel: TravelSettings = build.request.travel,
): Promise<void> {
  const vehicleOf = new Map(result.runsheets.map((r) => [r.id, storedVehicle(build, r.vehicle_id)]));
  await addMembers(
    planning,
    'total_runsheets',
    'runsheets',
    runsheets.map((r) => r.id),
    runsheets.map((r) => ({
      ...runsheetKey(planning.id, r.id),
      entity: 'runsheet',
      ...r,
      tasks: storedRunsheetTasks(r),
      // The build's travel model, which the runsheet's live ETAs drive with (4.11; planning/etas.ts): its settings,
      // and the deployment's model (road legs between planned stops are the plan's own).
      travel: { ...travel, model: travelModel() },
      ...(vehicleOf.get(r.id) ? { vehicle: vehicleOf.get(r.id) } : {}),
    })),
  );
}

/** A vehicle with its driver: the runsheet is theirs, as X16 gives it (a retry finds it theirs and changes nothing). */
export async function assignDrivers(build: RouteBuild, result: BuildResult) {
  for (const built of result.runsheets) {
    if (!built.driver_id) continue;
    try {
      await assignRunsheet(build.caller as Caller, build.planning_id, built.id, built.driver_id);
    } catch (error) {
      // The driver left the planning meanwhile (P8), or another has it: the runsheet stays open for dispatch.
      logger.warn('a built runsheet could not be assigned to its vehicle’s driver', {
        build_id: build.id,
        runsheet_id: built.id,
        error: error as Error,
      });
    }
  }
}

/**
 * What a build that ends `failed` leaves behind (contract 4.10: a failed build adds nothing). A run that failed after
 * `applyResult` began may have marked tasks as in the build's runsheets, and written some or all of them:
 * - all its runsheets in the planning (the apply got past writing them; only the count or an assignment was left):
 *   the rest is done and the build is rather `completed` (answers true): the user sees what the planner planned;
 * - else its runsheets written so far are taken out again and every task still marked as in one of them is freed
 *   (each release conditional on that mark, so a task another P5 or build took since stays theirs): `failed`.
 * Whole and repeatable: a rerun finds nothing more to do. A dry run or a build without a result never applied.
 */
export async function settleFailedApply(build: RouteBuild): Promise<boolean> {
  if (build.request.dry_run) return false;
  const result = await readResult(build);
  if (!result || result.runsheets.length === 0) return false;
  const ours = new Set(result.runsheets.map((r) => r.id));
  const present = await getAll<{ id: string }>(
    mainTableName(),
    [...ours].map((id) => runsheetKey(build.planning_id, id)),
    { ConsistentRead: true, ProjectionExpression: 'id' },
  );
  const planning = await findPlanning(build.planning_id, true);
  if (planning && present.length === ours.size) {
    await recount(planning);
    await assignDrivers(build, result);
    return true;
  }
  if (planning && present.length > 0) {
    for (const { id } of present)
      await db().send(new DeleteCommand({ TableName: mainTableName(), Key: runsheetKey(planning.id, id) }));
    await recount(planning);
  }
  const taskIds = result.runsheets.flatMap((r) => [...new Set(r.stops.map((s) => s.task_id))]);
  const marks = await getAll<{ id: string; planning_id?: string; runsheet_id?: string }>(
    mainTableName(),
    taskIds.map(taskKey),
    { ConsistentRead: true, ProjectionExpression: 'id, planning_id, runsheet_id' },
  );
  const held = marks.filter((t) => t.planning_id === build.planning_id && ours.has(String(t.runsheet_id)));
  for (let i = 0; i < held.length; i += 25)
    await Promise.all(
      held
        .slice(i, i + 25)
        .map((t) => releaseTask(build.org_id, build.planning_id, String(t.runsheet_id), String(t.id))),
    );
  if (held.length > 0 || present.length > 0)
    logger.info('a failed route build’s partial apply undone', {
      build_id: build.id,
      tasks_freed: held.length,
      runsheets_removed: present.length,
    });
  return false;
}

/** Sets the planning's runsheet count to what it holds (read consistently: a runsheet just written or taken out). */
async function recount(planning: Planning) {
  await addMembers(planning, 'total_runsheets', 'runsheets', [], [], await planningContents(planning.id, true));
}
