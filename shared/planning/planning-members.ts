/**
 * A planning's members (P5–P8): runsheets (their tasks given, or imported tasks named by `task_ids`, each claimed with
 * one conditional write and freed again in two steps a crash cannot leave half done) and drivers. Members are added
 * without a transaction and then counted on the profile; one is removed with its count in one versioned change. A
 * planning never grows past what P3 can answer.
 */

import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { getUser } from '#shared/accounts/users';
import type { Caller } from '#shared/auth/caller';
import { DRIVERS, type Role } from '#shared/auth/roles';
import { putAll } from '#shared/db/batch';
import { cancelledIndexes, db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { moveCurrent } from '#shared/db/moves';
import { PAGE_ANSWER_BUDGET_BYTES } from '#shared/db/paging';
import { conflict, invalidAt, notFound } from '#shared/errors';
import { checkClaims, claimTask, importedTask, isInRunsheet, releaseTask, releaseTasks } from '#shared/imports/tasks';
import { planningDriverKey, runsheetKey } from '#shared/planning/keys';
import { keepOfferedRunsheets, planningRunsheets } from '#shared/planning/offered-runsheets';
import {
  findPlanning,
  type Planning,
  planningContents,
  type Runsheet,
  type RunsheetInput,
  storedRunsheetTasks,
  visiblePlanning,
} from '#shared/planning/planning-records';
import {
  changePlanning,
  type PlanningContents,
  planningBytes,
  toPlanningView,
  writeChange,
} from '#shared/planning/plannings';

/** The record of a release of imported tasks from one runsheet, kept until every task is free again. */
const releaseKey = (planId: string, runsheetId: string) => ({ PK: `PLANNING#${planId}`, SK: `RELEASE#${runsheetId}` });

/**
 * Frees imported tasks a runsheet no longer holds (P6 removed it, P5 replaced it without them) in two steps that can
 * be interrupted: `beginRelease` records the task ids before the change that drops them, `finishRelease` frees each
 * (on condition it is still this runsheet's) and then drops the record. A call that dies in between leaves the record,
 * and the next P5 of the planning or P6 of that runsheet finishes it first (a retried P6 then answers 200): a task is
 * never left marked as planned in a runsheet that does not name it.
 */
async function beginRelease(planning: Planning, runsheetId: string, taskIds: readonly string[]) {
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: { ...releaseKey(planning.id, runsheetId), entity: 'task_release', task_ids: [...taskIds] },
    }),
  );
}

async function finishRelease(planning: Planning, runsheetId: string, taskIds: readonly string[]) {
  await releaseTasks(planning.org_id, planning.id, runsheetId, taskIds);
  await db().send(new DeleteCommand({ TableName: mainTableName(), Key: releaseKey(planning.id, runsheetId) }));
}

/**
 * Refuses (400 at `path`) a change after which P3's answer would pass the answer budget (Lambda's 6 MB, contract 4.9):
 * a planning holds at most what one answer carries. Checked before the change writes anything.
 */
function assertPlanningFits(runsheets: Runsheet[], drivers: { id: string }[], path: 'runsheets' | 'drivers') {
  const bytes = planningBytes(runsheets, drivers);
  if (bytes > PAGE_ANSWER_BUDGET_BYTES) {
    const mb = (n: number) => (n / 1_000_000).toFixed(2);
    throw invalidAt(
      path,
      `would make the planning ${mb(bytes)} MB as P3 answers it, over the ${mb(PAGE_ANSWER_BUDGET_BYTES)} MB one planning may hold: put these ${path} in another planning`,
    );
  }
}

/**
 * P5 and P7 add items to the planning without a transaction (it would double every unit): the items first (each put
 * is whole, so writing one again changes nothing), then the profile's counter set to what the planning now holds, on
 * the condition that the version is the one read; when another change came between, both are read again and the
 * count taken again. A run that dies between the two is completed by its retry (same Idempotency-Key): the items
 * are there, the count is taken over them.
 */
export async function addMembers(
  planning: Planning,
  counter: 'total_runsheets' | 'total_drivers',
  kind: 'runsheets' | 'drivers',
  ids: string[],
  items: Record<string, unknown>[],
  /** What the planning holds with the items, when the caller knows it without another read. */
  known?: PlanningContents,
): Promise<{ planning: Planning; contents: PlanningContents }> {
  // 25 a BatchWriteItem, in order (shared/db/batch.ts).
  await putAll(mainTableName(), items);
  let current = planning;
  for (let attempt = 0; ; attempt++) {
    // After a stale version another writer's items are just written: a consistent read counts them.
    const contents = attempt === 0 && known ? known : await planningContents(current.id, attempt > 0);
    const total = new Set([...contents[kind].map((member) => member.id), ...ids]).size;
    try {
      return { planning: await changePlanning(current, undefined, { [counter]: total }), contents };
    } catch (error) {
      if (attempt >= 4 || !(error as Error).message.includes('stale')) throw error;
      const latest = await findPlanning(current.id);
      if (!latest) throw notFound('planning');
      current = latest;
    }
  }
}

/** Sort keys in DynamoDB's order (UTF-8 bytes), so a view built here lists items as a Query would. */
const bySortKey = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * P5: new runsheets are added, a runsheet with a known id is replaced (an offered one's tasks are first copied onto
 * its pairs: see offered-runsheets.ts).
 */
export async function addRunsheets(caller: Caller, id: string, input: RunsheetInput[]) {
  const planning = await visiblePlanning(caller, id);
  const ids = new Set<string>();
  const named = new Set<string>();
  input.forEach((r, i) => {
    if (ids.has(r.id)) throw invalidAt(`runsheets[${i}].id`, 'repeats an earlier runsheet of this request');
    ids.add(r.id);
    if (r.tasks && r.task_ids) throw invalidAt(`runsheets[${i}].task_ids`, 'give tasks or task_ids, not both');
    if (!r.tasks && !r.task_ids) throw invalidAt(`runsheets[${i}].tasks`, 'is required (or task_ids)');
    r.task_ids?.forEach((taskId, j) => {
      if (named.has(taskId))
        throw invalidAt(`runsheets[${i}].task_ids[${j}]`, 'repeats an earlier task of this request');
      named.add(taskId);
    });
  });
  // Consistent: the tasks copied onto offered pairs and the count taken over them must be the planning's latest.
  const before = await planningContents(id, true);
  // Releases an earlier call left unfinished go first (a task one frees may be named again here), each freeing only
  // the tasks its runsheet, as stored now, does not name: the call that began it may have died before its change.
  for (const [runsheetId, taskIds] of before.releases) {
    const named = new Set(before.runsheets.find((r) => r.id === runsheetId)?.task_ids ?? []);
    await finishRelease(
      planning,
      runsheetId,
      taskIds.filter((taskId) => !named.has(taskId)),
    );
  }
  const kept = before.runsheets.filter((r) => !ids.has(r.id));
  const { tasks: imported, serviceTypeOf } = await claimImportedTasks(planning, input, (tasks) =>
    assertPlanningFits(
      [...kept, ...input.map((r, i) => ({ id: r.id, name: r.name ?? r.id, tasks: r.tasks ?? tasks[i]! }))],
      before.drivers,
      'runsheets',
    ),
  );
  await keepOfferedRunsheets(
    id,
    before.runsheets.filter((r) => ids.has(r.id)),
  );
  const inherited = importedServiceTypes(input, imported, serviceTypeOf);
  const stored: Runsheet[] = input.map((r, i) => {
    const serviceType = r.service_type ?? inherited[i];
    return {
      id: r.id,
      name: r.name ?? r.id,
      tasks: r.tasks ?? imported[i]!,
      ...(r.task_ids ? { task_ids: r.task_ids } : {}),
      ...(serviceType ? { service_type: serviceType } : {}),
    };
  });
  // The imported tasks a replaced runsheet held and no longer names are freed once it is replaced.
  const freed = before.runsheets
    .filter((r) => ids.has(r.id) && r.task_ids)
    .map((old) => {
      const kept = new Set(stored.find((r) => r.id === old.id)?.task_ids ?? []);
      return { runsheetId: old.id, taskIds: old.task_ids!.filter((taskId) => !kept.has(taskId)) };
    })
    .filter((release) => release.taskIds.length > 0);
  for (const release of freed) await beginRelease(planning, release.runsheetId, release.taskIds);
  const after = await addMembers(
    planning,
    'total_runsheets',
    'runsheets',
    [...ids],
    stored.map((r) => ({ ...runsheetKey(id, r.id), entity: 'runsheet', ...r, tasks: storedRunsheetTasks(r) })),
    {
      runsheets: [...before.runsheets.filter((r) => !ids.has(r.id)), ...stored].sort((a, b) => bySortKey(a.id, b.id)),
      drivers: before.drivers,
      releases: new Map(freed.map((release) => [release.runsheetId, release.taskIds])),
    },
  );
  for (const release of freed) await finishRelease(planning, release.runsheetId, release.taskIds);
  return toPlanningView(after.planning, after.contents);
}

/**
 * Contract 4.7: a runsheet of imported tasks that names no `service_type` takes their import job's (I4a/I4b's
 * `service_type`, read with the jobs' status by `checkClaims`), when its tasks' jobs agree on one.
 */
function importedServiceTypes(
  input: RunsheetInput[],
  imported: Record<string, unknown>[][],
  serviceTypeOf: Map<string, string | undefined>,
): (string | undefined)[] {
  return input.map((r, i) => {
    if (!r.task_ids || r.service_type) return undefined;
    const types = new Set(imported[i]!.map((task) => serviceTypeOf.get(String(task['import_job_id']))));
    const [only] = [...types];
    return types.size === 1 && only ? only : undefined;
  });
}

/**
 * P5 `task_ids`: checks every named task first (`checkClaims`: batched reads, the first refusal in request order
 * thrown before anything is written), then marks each as in its runsheet with one conditional write (so two P5 calls
 * naming the same task cannot both have it; a task read as this runsheet's already is not written again) and answers
 * each runsheet's tasks as imported, in the order named. A mark refused after all (a concurrent call took the task
 * between the read and the write) or failed (DynamoDB) ends the marking: the tasks this call marked are freed again
 * and the first failure in request order is thrown, so no task stays marked for a runsheet this call did not save.
 */
async function claimImportedTasks(
  planning: Planning,
  input: RunsheetInput[],
  /** Judges the runsheets with their imported tasks as read, before any task is marked (it throws to refuse). */
  fits: (tasks: Record<string, unknown>[][]) => void,
): Promise<{ tasks: Record<string, unknown>[][]; serviceTypeOf: Map<string, string | undefined> }> {
  const claims = input.flatMap((r, i) =>
    (r.task_ids ?? []).map((taskId, j) => ({ runsheetId: r.id, taskId, path: `runsheets[${i}].task_ids[${j}]` })),
  );
  const { tasks: stored, serviceTypeOf } = await checkClaims(planning.org_id, planning.id, claims);
  fits(input.map((r) => (r.task_ids ?? []).map((taskId) => importedTask(stored.get(taskId)!))));
  const tasks = new Map<string, Record<string, unknown>>();
  const toMark = claims.filter((c) => {
    const task = stored.get(c.taskId)!;
    if (!isInRunsheet(task, planning.id, c.runsheetId)) return true;
    tasks.set(c.taskId, importedTask(task));
    return false;
  });
  const marked: typeof claims = [];
  let failure: unknown;
  for (let i = 0; i < toMark.length && failure === undefined; i += 25) {
    const round = toMark.slice(i, i + 25);
    const settled = await Promise.allSettled(
      round.map((c) => claimTask(planning.org_id, planning.id, c.runsheetId, c.taskId, c.path)),
    );
    settled.forEach((outcome, k) => {
      if (outcome.status === 'rejected') failure ??= outcome.reason;
      else {
        tasks.set(round[k]!.taskId, outcome.value.task);
        if (outcome.value.claimed) marked.push(round[k]!);
      }
    });
  }
  if (failure !== undefined) {
    for (let i = 0; i < marked.length; i += 25)
      await Promise.all(
        marked.slice(i, i + 25).map((c) => releaseTask(planning.org_id, planning.id, c.runsheetId, c.taskId)),
      );
    throw failure;
  }
  return { tasks: input.map((r) => (r.task_ids ?? []).map((taskId) => tasks.get(taskId)!)), serviceTypeOf };
}

/**
 * Removes one runsheet or driver item and counts it down, in one versioned change; 404 when it is not there. The
 * caller sent no version: a change that came between the read and the write (another member added or removed, a job
 * started) is no reason for a 409, so the planning is read again and the count taken from it (shared/db/moves.ts).
 */
async function removeMember(
  planning: Planning,
  sortKey: string,
  counter: 'total_runsheets' | 'total_drivers',
  what: string,
) {
  const id = planning.id;
  await moveCurrent(
    planning,
    async (current) => {
      try {
        return await writeChange(current, { [counter]: current[counter] - 1 }, [
          {
            Delete: {
              TableName: mainTableName(),
              Key: { PK: `PLANNING#${id}`, SK: sortKey },
              ConditionExpression: 'attribute_exists(PK)',
            },
          },
        ]);
      } catch (error) {
        // The version held and the item's condition did not: it is not there.
        if (isConditionalFailure(error) && !cancelledIndexes(error).includes(0)) throw notFound(what);
        throw error;
      }
    },
    {
      reread: () => findPlanning(id, true),
      gone: () => notFound('planning'),
      contended: () => conflict('the planning kept changing; retry'),
    },
  );
}

/** P6 (an offered runsheet's tasks are first copied onto its pairs: see offered-runsheets.ts). */
export async function removeRunsheet(caller: Caller, id: string, runsheetId: string) {
  const planning = await visiblePlanning(caller, id);
  const removed = [...(await planningRunsheets(id, [runsheetId])).values()];
  const done = { message: 'the runsheet is removed from the planning' };
  if (removed.length === 0) {
    // Gone already: a P6 that removed it and died before its tasks were free leaves their release, finished here.
    const pending = await db().send(
      new GetCommand({ TableName: mainTableName(), Key: releaseKey(id, runsheetId), ConsistentRead: true }),
    );
    if (pending.Item) {
      await finishRelease(planning, runsheetId, pending.Item['task_ids'] as string[]);
      return done;
    }
  }
  await keepOfferedRunsheets(id, removed);
  // Its imported tasks are free again (X10 `planned=false`) once it is gone.
  const taskIds = removed[0]?.task_ids ?? [];
  if (taskIds.length > 0) await beginRelease(planning, runsheetId, taskIds);
  await removeMember(planning, runsheetKey(id, runsheetId).SK, 'total_runsheets', 'runsheet');
  if (taskIds.length > 0) await finishRelease(planning, runsheetId, taskIds);
  return done;
}

/** P7: every id must be a driver of the planning's organisation, or a freelance driver. */
export async function addDrivers(caller: Caller, id: string, drivers: { id: string }[]) {
  const planning = await visiblePlanning(caller, id);
  const before = await planningContents(id, true);
  const existing = before.drivers;
  const known = new Set(existing.map((d) => d.id));
  const fresh: string[] = [];
  // Each driver's name goes onto the planning's driver item: the pair records the job writes carry it.
  const names = new Map<string, string>();
  await Promise.all(
    drivers.map(async (driver, i) => {
      const user = await getUser(driver.id);
      const isDriver =
        user && !user.deleted_at && user.roles.some((role) => (DRIVERS as readonly Role[]).includes(role));
      if (!isDriver || (user.org_id !== null && user.org_id !== planning.org_id)) {
        throw invalidAt(`drivers[${i}].id`, "names no driver of the planning's organisation (or freelance driver)");
      }
      names.set(driver.id, user.name);
    }),
  );
  for (const driver of drivers) if (!known.has(driver.id) && !fresh.includes(driver.id)) fresh.push(driver.id);
  assertPlanningFits(before.runsheets, [...existing, ...fresh.map((driverId) => ({ id: driverId }))], 'drivers');
  // Positions follow the drivers already there (a retry after a partial run continues where that run stopped).
  const after = await addMembers(
    planning,
    'total_drivers',
    'drivers',
    fresh,
    fresh.map((driverId, i) => ({
      ...planningDriverKey(id, driverId),
      entity: 'planning_driver',
      id: driverId,
      name: names.get(driverId) ?? '',
      position: existing.length + i,
    })),
    {
      runsheets: before.runsheets,
      drivers: [...existing, ...fresh.map((driverId) => ({ id: driverId, name: names.get(driverId) ?? '' }))],
      releases: before.releases,
    },
  );
  return toPlanningView(after.planning, after.contents);
}

/** P8. */
export async function removeDriver(caller: Caller, id: string, driverId: string) {
  await removeMember(
    await visiblePlanning(caller, id),
    `DRIVER#${driverId}`,
    'total_drivers',
    'driver of this planning',
  );
  return { message: 'the driver is removed from the planning' };
}
