/**
 * The route-build worker (contract 4.10): runs one build from the route queue, in a function of its own. It takes
 * the build with a lease (the planning job's and the import runner's shape: `queued` → `solving` on a conditional
 * write naming the message, a lapsed lease taken over, three attempts at most, watched by the requeue sweep until it
 * ends; its runs end as theirs do, shared/workers/endings.ts), checks its caller's access again (caller-access.ts), reads the tasks, solves in a thread (the travel matrix
 * built there too; writing `progress` as it comes), stores the result, checks the caller again, adds the runsheets
 * unless `dry_run` (apply.ts: exactly once), and tells `route_build.completed` or
 * `route_build.failed` on `planning.<id>` and to the organisation's partners.
 */
import { randomUUID } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { putAll } from '#shared/db/batch';
import { db, mainTableName } from '#shared/db/client';
import { DomainError } from '#shared/errors';
import { logger } from '#shared/log';
import { publishEvent } from '#shared/notifications/realtime';
import { findPlanning } from '#shared/planning/planning-records';
import { type QueuedMessage, registerLocalWorker } from '#shared/ports/queue';
import {
  applyResult,
  builtRunsheets,
  fitsPlanning,
  loadBuildTasks,
  planningChanged,
  settleFailedApply,
} from '#shared/routing/apply';
import { applyInsertion, settleFailedInsertion } from '#shared/routing/apply-insertion';
import { releaseBuildPlace } from '#shared/routing/build-slots';
import { buildTaskIds, findBuild, listBuild, type RouteBuild, readResult } from '#shared/routing/builds';
import { checkCallerStillMay } from '#shared/routing/caller-access';
import { buildKey, buildProgressKey, resultPartKey } from '#shared/routing/keys';
import { liveTravel, prepareLive, readLiveRoutes, toLiveResult } from '#shared/routing/live';
import { type BuildTask, prepareProblem, toResult } from '#shared/routing/problem';
import type { BuildResult } from '#shared/routing/schemas';
import { solveInThread } from '#shared/routing/solve-runner';
import type { ProblemToSolve } from '#shared/routing/travel';
import { earliestShiftStartMs, travelPortFor } from '#shared/routing/travel-model';
import { publishPartnerEvent } from '#shared/webhooks/deliveries';
import { failRun, finishJob } from '#shared/workers/endings';
import { claimLease, type LeasedRecord, MAX_ATTEMPTS } from '#shared/workers/lease';

export const MAX_BUILD_ATTEMPTS = MAX_ATTEMPTS;
/** The lease outlives the function's timeout (lib/stacks/workers-stack.ts: ROUTE_WORKER_TIMEOUT), so no live run loses it. */
export const leaseMsOf = (build: RouteBuild) => build.request.time_limit_s * 1000 + 15 * 60 * 1000;
/** How often the solver reports its best distance (the build's `progress`). */
export const PROGRESS_EVERY_MS = 2000;
/** A result's JSON is stored in parts of at most this many characters (an item holds 400 KB). */
const RESULT_PART_CHARS = 300_000;

/** The build's lease (shared/workers/lease.ts): `queued` → `solving`, on the build's record. */
const leased = (build: RouteBuild): LeasedRecord => ({
  name: 'route build',
  key: buildKey(build.planning_id, build.id),
  status: 'status',
  queued: 'queued',
  running: 'solving',
});

/** Takes the build for this run: from `queued`, or from `solving` whose lease lapsed or is this message's. */
const claimBuild = (build: RouteBuild, owner: string) =>
  claimLease<RouteBuild>(leased(build), build.status, owner, leaseMsOf(build), {
    always: { set: { updated_at: clock.nowIso() } },
  });

/** Writes on the build while this run holds it (a lapsed run's late write changes nothing). */
async function updateHeld(build: RouteBuild, owner: string, set: Record<string, unknown>, remove: string[] = []) {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ':solving': 'solving', ':owner': owner };
  const sets = Object.entries({ ...set, updated_at: clock.nowIso() }).map(([key, value], i) => {
    names[`#f${i}`] = key;
    values[`:v${i}`] = value;
    return `#f${i} = :v${i}`;
  });
  const out = await db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: buildKey(build.planning_id, build.id),
      UpdateExpression: `SET ${sets.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
      ConditionExpression: '#status = :solving AND lease_owner = :owner',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }),
  );
  const updated = out.Attributes as RouteBuild;
  await listBuild(updated);
  return updated;
}

/**
 * The solver's latest figures, in the build's progress item (some 200 bytes, 1 WCU; the record itself was rewritten
 * before, 75–86 KB with its task ids: 85 WCU every 2 s). Unconditional: a lapsed run's late write shows its own
 * figures until the run that took over writes its next ones, and X24 shows progress only while the build is solving.
 */
export async function writeProgress(build: RouteBuild, progress: { best_distance_m: number; elapsed_ms: number }) {
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: {
        ...buildProgressKey(build.planning_id, build.id),
        entity: 'route_build_progress',
        build_id: build.id,
        progress,
        updated_at: clock.nowIso(),
        expires_at: build.expires_at,
      },
    }),
  );
}

/** The build's tasks as imported (apply.ts `loadBuildTasks`: eventually consistent, half a unit a task). */
const loadTasks = async (build: RouteBuild): Promise<BuildTask[]> => loadBuildTasks(await buildTaskIds(build));

/** A seed that follows from the build, so that a rerun searches as the first run did. */
const seedOf = (buildId: string) => Number.parseInt(buildId.replace(/-/g, '').slice(0, 8), 16) >>> 0;

async function solveBuild(build: RouteBuild, tasks: BuildTask[]): Promise<BuildResult> {
  const prepared = await prepareProblem(
    build,
    tasks,
    // The deployment's travel model (travel-model.ts): the straight line unless road travel times were turned on.
    travelPortFor(build.request.travel, earliestShiftStartMs(build.request.vehicles)),
  );
  const started = clock.nowMs();
  const solution = await solveWithProgress(build, prepared.problem);
  return toResult(build, prepared, solution, clock.nowMs() - started, build.task_count);
}

/** The build's problem solved in the solver's thread, its progress written on the build as it comes (X24's). */
async function solveWithProgress(build: RouteBuild, problem: ProblemToSolve) {
  const progress = progressWriter(build);
  const solution = await solveInThread(problem, {
    seed: seedOf(build.id),
    timeLimitMs: build.request.time_limit_s * 1000,
    progressEveryMs: PROGRESS_EVERY_MS,
    onProgress: progress.onProgress,
  });
  await progress.written();
  return solution;
}

/** The solver's progress written on the build as it comes (X24's `progress`), one write at a time. */
function progressWriter(build: RouteBuild) {
  let writing = Promise.resolve();
  return {
    onProgress: ({ bestDistanceM, elapsedMs }: { bestDistanceM: number; elapsedMs: number }) => {
      // One write at a time, the latest figures: a slow write never queues up behind the solver.
      writing = writing
        .then(() =>
          writeProgress(build, { best_distance_m: Math.round(bestDistanceM), elapsed_ms: Math.round(elapsedMs) }),
        )
        .then(
          () => undefined,
          (error: unknown) => logger.warn('route build progress not written', { error: error as Error }),
        );
    },
    written: () => writing,
  };
}

/**
 * X30's solve (contract 4.11; live.ts): the live routes as they stand now, the same solver handed them as its
 * starting state, the result in 4.10's shape with what was added. Answers the travel it drove with (the live
 * runsheets' own when they agree), which the apply gives the runsheets it makes.
 */
async function solveInsertion(build: RouteBuild, tasks: BuildTask[]) {
  const now = clock.nowMs();
  const routes = await readLiveRoutes(build, now);
  const travel = liveTravel(routes);
  const prepared = await prepareLive(build, routes, tasks, now, travelPortFor(travel, now));
  const started = clock.nowMs();
  const solution = await solveWithProgress(build, prepared.problem);
  return { result: toLiveResult(build, prepared, solution, clock.nowMs() - started), travel };
}

/** Stores the result in parts and notes it on the build (a rerun then applies it instead of solving again). */
async function saveResult(build: RouteBuild, owner: string, result: BuildResult): Promise<RouteBuild> {
  const text = JSON.stringify(result);
  const parts = Math.max(1, Math.ceil(text.length / RESULT_PART_CHARS));
  await putAll(
    mainTableName(),
    Array.from({ length: parts }, (_, i) => ({
      ...resultPartKey(build.id, i),
      entity: 'route_build_result',
      expires_at: build.expires_at,
      text: text.slice(i * RESULT_PART_CHARS, (i + 1) * RESULT_PART_CHARS),
    })),
  );
  return updateHeld(build, owner, { result_parts: parts, summary: result.summary });
}

/**
 * Ends the build (`completed` or `failed`), stops the sweep's watch of it and gives its organisation's place back
 * (build-slots.ts): an ended build holds no place.
 */
async function end(
  build: RouteBuild,
  owner: string,
  status: 'completed' | 'failed',
  set: Record<string, unknown> = {},
) {
  const ended = await updateHeld(build, owner, { ...set, status, announced: false }, [
    'GSI3PK',
    'GSI3SK',
    'lease_until',
  ]);
  await releaseBuildPlace(build.org_id, build.planning_id, build.id);
  return ended;
}

/**
 * Ends a build that failed, after undoing what a run's partial apply left (apply.ts `settleFailedApply`): its tasks
 * freed, nothing added. A build whose runsheets were all added already is finished and ends `completed` instead.
 */
async function endFailed(build: RouteBuild, owner: string, error: { code: string; detail: string }) {
  const completed = build.kind === 'insertion' ? await settleFailedInsertion(build) : await settleFailedApply(build);
  await finishJob(
    () => (completed ? end(build, owner, 'completed') : end(build, owner, 'failed', { error })),
    announce,
  );
}

/** Tells the end on the planning's channel and to partners, then marks it told (a retry tells it again if not). */
async function announce(build: RouteBuild) {
  // Announced only at its end (`end` set it): `completed` or `failed`.
  const status = build.status as 'completed' | 'failed';
  const name = `route_build.${status}` as const;
  const data = {
    planning_id: build.planning_id,
    route_build_id: build.id,
    status,
    dry_run: build.request.dry_run,
    ...(build.summary ? { summary: build.summary } : {}),
    ...(build.error ? { error: build.error } : {}),
  };
  const key = `${build.id}:${build.status}`;
  await publishEvent(`planning.${build.planning_id}`, name, { key, data });
  await publishPartnerEvent(build.org_id, name, data, key);
  await db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: buildKey(build.planning_id, build.id),
      UpdateExpression: 'SET announced = :true',
      ExpressionAttributeValues: { ':true': true },
    }),
  );
}

/** One run of one build (the route queue's message). */
export async function runRouteBuild(message: QueuedMessage): Promise<void> {
  const found = await findBuild(String(message['planning_id']), String(message['build_id']), true);
  if (!found) return;
  if (found.status === 'completed' || found.status === 'failed') {
    // A run that died between its end and giving its place back and announcing it: its place given back now
    // (nothing if it was), its list entry (which may still show it solving) written again, its end told.
    if (found.announced === false) {
      await releaseBuildPlace(found.org_id, found.planning_id, found.id);
      await listBuild(found);
      await announce(found);
    }
    return;
  }
  const owner = message.message_id ?? randomUUID();
  let build = await claimBuild(found, owner);
  if (!build) return;
  await listBuild(build);
  try {
    const planning = await findPlanning(build.planning_id, true);
    if (!planning || (planning.version_rev !== build.base_rev && planning.route_build !== build.id))
      throw planningChanged(
        'the planning changed after the build was asked for (a runsheet added or removed, a job started, or another build applied): nothing was added; build again',
      );
    const tasks = await loadTasks(build);
    let result = await readResult(build);
    let travel = build.request.travel;
    if (!result) {
      // Its caller's access, as it stands when the build starts solving (caller-access.ts) ...
      await checkCallerStillMay(build);
      if (build.kind === 'insertion') ({ result, travel } = await solveInsertion(build, tasks));
      else result = await solveBuild(build, tasks);
      build = await saveResult(build, owner, result);
    }
    // ... and again before it applies: a caller who lost it meanwhile gets nothing added.
    await checkCallerStillMay(build);
    const byId = new Map(tasks.map((t) => [String(t.item['id']), t]));
    if (build.kind === 'insertion') {
      if (!build.request.dry_run) await applyInsertion(build, result, byId, travel);
    } else {
      const runsheets = builtRunsheets(result, byId);
      if (!build.request.dry_run) await applyResult(build, runsheets, result);
      else if (!(await fitsPlanning(build.planning_id, runsheets)))
        logger.info('a dry run’s result would not fit its planning', { build_id: build.id });
    }
    const finished = build;
    await finishJob(() => end(finished, owner, 'completed'), announce);
  } catch (thrown) {
    let error = thrown;
    if (
      error instanceof DomainError &&
      ['planning_changed', 'planning_too_large', 'access_revoked'].includes(error.code)
    ) {
      // Ending it undoes a partial apply first: a fault there is this run's failure like any other.
      const ending = await endFailed(build, owner, { code: error.code, detail: error.message }).then(
        () => undefined,
        (failed: unknown) => failed ?? new Error('the build could not be ended'),
      );
      if (!ending) return;
      error = ending;
    }
    logger.error('route build run failed', { build_id: build.id, attempt: build.attempts, error: error as Error });
    // Failed for good on its last attempt; else the queue's retry takes the build over (a dependency's fault uncounted).
    const failed = build;
    await failRun({ record: leased(failed), owner, attempts: failed.attempts }, error, () =>
      endFailed(failed, owner, {
        code: 'build_failed',
        detail: `the build failed ${MAX_BUILD_ATTEMPTS} times: nothing was added; build again`,
      }),
    );
  }
}

registerLocalWorker('route_build', runRouteBuild);
