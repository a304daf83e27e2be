/**
 * Route builds (contract 4.10): X23 checks the request and queues a build, X24 reads one, X25 lists a planning's.
 * A build is a record of its own (`ROUTES#<planning>` / `BUILD#<id>`, keys.ts): its request as checked, the
 * planning's `version_rev` it was asked against, the caller it acts for, its status and lease. Beside it, so that the
 * record stays about 1 KB and each update of it costs a unit or two (issue 51 finding 4): its task ids, packed, in an
 * item written once; its progress while solving, in an item of its own; its entry in the planning's list (what X25
 * shows); its result, in parts, once solved. Each expires 30 days after the build was asked for (contract 4.10). The
 * worker (worker.ts) runs it from the route queue.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { putAll } from '#shared/db/batch';
import { db, getAll, isConditionalFailure, mainTableName, queryAll } from '#shared/db/client';
import { type PageRequest, queryPage } from '#shared/db/paging';
import { conflict, invalidAt, notFound } from '#shared/errors';
import { recordUuid } from '#shared/ids';
import { findJob } from '#shared/imports/jobs';
import { checkJobClaims, checkNamedClaims } from '#shared/imports/tasks';
import { dispatchRecords } from '#shared/planning/dispatch-records';
import { planningDriverKey, runsheetKey } from '#shared/planning/keys';
import { visiblePlanning } from '#shared/planning/planning-records';
import { type QueuedMessage, routeQueue } from '#shared/ports/queue';
import { releaseBuildPlace, takeBuildPlace } from '#shared/routing/build-slots';
import {
  buildKey,
  buildListKey,
  buildListPartition,
  buildProgressKey,
  buildTasksKey,
  resultPartition,
} from '#shared/routing/keys';
import type { BuildResult, CreateBuildInput, CreateInsertionInput, VehicleInput } from '#shared/routing/schemas';
import { MAX_TASKS, ROUTE_DEFAULTS } from '#shared/routing/schemas';
import { activeJobsPartition, requeueAt } from '#shared/workers/active-jobs';

export type BuildStatus = 'queued' | 'solving' | 'completed' | 'failed';

/** A build as stored (its keys aside). */
export interface RouteBuild {
  id: string;
  planning_id: string;
  org_id: string;
  status: BuildStatus;
  /** X30's builds say `insertion` (tasks added to the live runsheets: shared/routing/live.ts); X23's say nothing. */
  kind?: 'insertion';
  /**
   * The request as X23 checked it, with the task ids resolved (an import job's tasks named one by one). X30's: its
   * own fields, 4.10's defaults for the rest (`vehicles` empty when it names none), and the runsheets it named.
   */
  request: Omit<CreateBuildInput, 'task_ids' | 'import_job_id'> & { import_job_id?: string; runsheet_ids?: string[] };
  /** How many tasks it names: the ids themselves are an item of their own (`buildTaskIds`). */
  task_count: number;
  /** Total vehicles, each `count` expanded. */
  vehicle_count: number;
  /** The planning's `version_rev` when the build was asked for: any other change since fails it (planning_changed). */
  base_rev: string;
  /** Who asked: the build assigns runsheets (X16) as them. */
  caller: Caller;
  created_at: string;
  updated_at: string;
  /** When DynamoDB's TTL removes it (epoch seconds): `BUILD_RETENTION_DAYS` after it was asked for. */
  expires_at: number;
  error?: { code: string; detail: string };
  summary?: BuildResult['summary'];
  /** The result is stored (its parts): a rerun after it applies it instead of solving again. */
  result_parts?: number;
  lease_until?: number;
  lease_owner?: string;
  attempts?: number;
  /** Whether the end (completed or failed) was told on the channel and to partners. */
  announced?: boolean;
  /** A dry run applied (X31, apply-dry-run.ts): when, and which apply holds it (a retry of that apply finishes it). */
  applied_at?: string;
  apply_owner?: string;
}

/** Its progress while solving, as the worker last wrote it (an item of its own). */
export interface BuildProgress {
  progress: { best_distance_m: number; elapsed_ms: number };
  updated_at: string;
}

/** Builds, their task ids, progress, list entries and results are kept this long (contract 4.10), then TTL takes them. */
export const BUILD_RETENTION_DAYS = 30;
const retainedUntil = (createdAt: string) => Math.floor(Date.parse(createdAt) / 1000) + BUILD_RETENTION_DAYS * 86_400;

/** X24/X25's view of a build: never its keys, lease, caller or request internals. */
export function toBuildView(build: RouteBuild, result?: BuildResult, progress?: BuildProgress) {
  const solving = build.status === 'solving' && progress;
  return {
    id: build.id,
    planning_id: build.planning_id,
    status: build.status,
    kind: build.kind ?? ('build' as const),
    dry_run: build.request.dry_run,
    objective: build.request.objective,
    time_limit_s: build.request.time_limit_s,
    tasks: build.task_count,
    vehicles: build.vehicle_count,
    created_at: build.created_at,
    updated_at: solving && progress.updated_at > build.updated_at ? progress.updated_at : build.updated_at,
    ...(solving ? { progress: progress.progress } : {}),
    ...(build.error ? { error: build.error } : {}),
    ...(build.summary ? { summary: build.summary } : {}),
    ...(build.applied_at ? { applied_at: build.applied_at } : {}),
    ...(result ? { result } : {}),
  };
}
type BuildView = ReturnType<typeof toBuildView>;

/** The tasks X23 names: `task_ids` as given, or an import job's tasks (each at the path it was named at). */
async function namedTasks(
  orgId: string,
  planningId: string,
  input: Pick<CreateBuildInput, 'task_ids' | 'import_job_id'>,
): Promise<{ id: string; path: string }[]> {
  if (input.task_ids) {
    const seen = new Set<string>();
    const named = input.task_ids.map((id, j) => {
      if (seen.has(id)) throw invalidAt(`task_ids[${j}]`, 'repeats an earlier task of this request');
      seen.add(id);
      return { id, path: `task_ids[${j}]` };
    });
    // As P5 (contract 4.6): an unknown task is a 400, one in a runsheet (of any planning) a 409, each at its path.
    await checkNamedClaims(
      orgId,
      planningId,
      named.map((t) => ({ runsheetId: '', taskId: t.id, path: t.path })),
      MAX_TASKS,
    );
    return named;
  }
  const job = await findJob(input.import_job_id!);
  if (!job || job.org_id !== orgId)
    throw invalidAt('import_job_id', "names no import job of the planning's organisation");
  const ids = await checkJobClaims(orgId, planningId, job, 'import_job_id', MAX_TASKS);
  return ids.map((id) => ({ id, path: 'import_job_id' }));
}

/** A build's task ids as stored: 24 hex digits each (`taskId`), packed into 12 bytes. */
const packTaskIds = (ids: string[]) => Buffer.from(ids.join(''), 'hex');
const unpackTaskIds = (packed: Uint8Array) => Buffer.from(packed).toString('hex').match(/.{24}/g) ?? [];

/** The build's task ids (one read of its packed ids: 24 KB for 2 000 tasks). */
export async function buildTaskIds(build: RouteBuild): Promise<string[]> {
  const out = await db().send(
    new GetCommand({
      TableName: mainTableName(),
      Key: buildTasksKey(build.planning_id, build.id),
      ConsistentRead: true,
    }),
  );
  return unpackTaskIds(out.Item?.['ids'] as Uint8Array);
}

/** The build's entry in its planning's list: what X25 shows of it (its progress aside), rewritten at each change. */
export const buildListing = (build: RouteBuild) => ({
  ...buildListKey(build.planning_id, build.created_at, build.id),
  entity: 'route_build_listing',
  view: toBuildView(build),
  expires_at: build.expires_at,
});

/** Writes the build's list entry as the build now stands (1 WCU). */
export async function listBuild(build: RouteBuild): Promise<void> {
  await db().send(new PutCommand({ TableName: mainTableName(), Item: buildListing(build) }));
}

/**
 * A build's message on the route queue. Its group is its organisation: the route queue is an SQS fair queue, so one
 * organisation's builds waiting never hold back another's (docs/routing.md); locally the same group is the local
 * queue's turn (shared/ports/queue.ts).
 */
export const routeBuildMessage = (build: Pick<RouteBuild, 'planning_id' | 'id' | 'org_id'>): QueuedMessage => ({
  kind: 'route_build',
  planning_id: build.planning_id,
  build_id: build.id,
  group: build.org_id,
});

/** X23: checks the request against the planning (version, tasks, drivers), stores the build queued, queues it. */
export async function startBuild(caller: Caller, planningId: string, input: CreateBuildInput) {
  const planning = await visiblePlanning(caller, planningId);
  if (input.version_rev !== planning.version_rev)
    throw conflict('version_rev is stale: read the planning again and retry', 'conflict', [
      { path: 'version_rev', message: 'is not the planning’s current version' },
    ]);
  const named = await namedTasks(planning.org_id, planning.id, input);
  await checkVehicleDrivers(planning.id, input.vehicles);
  const { task_ids: _ids, import_job_id: jobId, ...request } = input;
  return queueBuild(caller, planning, named, { ...request, ...(jobId ? { import_job_id: jobId } : {}) });
}

/** Each vehicle's `driver_id` names a driver of the planning (P7), else a 400 at its path. */
async function checkVehicleDrivers(planningId: string, vehicles: readonly VehicleInput[]) {
  const drivers = vehicles.flatMap((vehicle, i) => (vehicle.driver_id ? [{ id: vehicle.driver_id, i }] : []));
  if (drivers.length === 0) return;
  const found = await getAll<{ id: string }>(
    mainTableName(),
    drivers.map((d) => planningDriverKey(planningId, d.id)),
    { ProjectionExpression: 'id' },
  );
  const known = new Set(found.map((d) => d.id));
  for (const d of drivers)
    if (!known.has(d.id))
      throw invalidAt(`vehicles[${d.i}].driver_id`, 'is not a driver of this planning (add them with P7 first)');
}

/**
 * X30 (contract 4.11): checks the request as X23 does (version, tasks, vehicles' drivers) and the runsheets it names
 * (each the planning's, live, of imported tasks: `checkLiveRunsheets`), stores the build queued with `kind:
 * "insertion"`, queues it. The worker solves it from the live state (shared/routing/live.ts).
 */
export async function startInsertion(caller: Caller, planningId: string, input: CreateInsertionInput) {
  const planning = await visiblePlanning(caller, planningId);
  if (input.version_rev !== planning.version_rev)
    throw conflict('version_rev is stale: read the planning again and retry', 'conflict', [
      { path: 'version_rev', message: 'is not the planning’s current version' },
    ]);
  if (input.runsheet_ids) await checkLiveRunsheets(planning.id, input.runsheet_ids);
  const named = await namedTasks(planning.org_id, planning.id, input);
  await checkVehicleDrivers(planning.id, input.vehicles ?? []);
  const { task_ids: _ids, import_job_id: jobId, vehicles, ...rest } = input;
  return queueBuild(
    caller,
    planning,
    named,
    {
      ...rest,
      vehicles: vehicles ?? [],
      // The live runsheets drive with their own travel (live.ts); these are 4.10's defaults, for X24 to show.
      travel: { speed_kmh: ROUTE_DEFAULTS.speed_kmh, detour_factor: ROUTE_DEFAULTS.detour_factor },
      service_s: { pickup: ROUTE_DEFAULTS.pickup_s, dropoff: ROUTE_DEFAULTS.dropoff_s },
      objective: 'distance',
      ...(jobId ? { import_job_id: jobId } : {}),
    },
    'insertion',
  );
}

/**
 * The runsheets X30 names: each once, the planning's (else a 400 at its path), of imported tasks (a runsheet given
 * its tasks inline by P5 holds no task X30 could add to: a 409), and neither completed nor cancelled (a 409).
 */
async function checkLiveRunsheets(planningId: string, ids: readonly string[]) {
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) throw invalidAt(`runsheet_ids[${i}]`, 'repeats an earlier runsheet of this request');
    seen.add(id);
  });
  const [items, statusOf] = await Promise.all([
    getAll<{ id: string; task_ids?: unknown }>(
      mainTableName(),
      ids.map((id) => runsheetKey(planningId, id)),
      { ProjectionExpression: 'id, task_ids' },
    ),
    dispatchRecords(planningId, [...ids]),
  ]);
  const byId = new Map(items.map((item) => [item.id, item]));
  ids.forEach((id, i) => {
    const item = byId.get(id);
    if (!item) throw invalidAt(`runsheet_ids[${i}]`, 'is not a runsheet of this planning');
    const { status } = statusOf(id);
    if (status === 'completed' || status === 'cancelled')
      throw conflict(`runsheet ${id} is ${status}: tasks are added to live runsheets only`, 'conflict', [
        { path: `runsheet_ids[${i}]`, message: `is ${status}` },
      ]);
    if (!Array.isArray(item.task_ids))
      throw conflict(`runsheet ${id} holds tasks given inline (P5 tasks), not imported tasks`, 'conflict', [
        {
          path: `runsheet_ids[${i}]`,
          message: 'holds tasks given inline: X30 adds imported tasks to runsheets of imported tasks',
        },
      ]);
  });
}

/** Stores a checked build queued (its organisation's place first: build-slots.ts) and queues it (X23, X30). */
async function queueBuild(
  caller: Caller,
  planning: { id: string; org_id: string; version_rev: string },
  named: { id: string }[],
  request: RouteBuild['request'],
  kind?: 'insertion',
) {
  const now = clock.nowIso();
  const build: RouteBuild = {
    id: recordUuid(),
    planning_id: planning.id,
    org_id: planning.org_id,
    status: 'queued',
    ...(kind ? { kind } : {}),
    request,
    task_count: named.length,
    vehicle_count: request.vehicles.reduce((sum, vehicle) => sum + (vehicle.count ?? 1), 0),
    base_rev: planning.version_rev,
    caller: {
      kind: caller.kind,
      id: caller.id,
      roles: caller.roles,
      orgId: caller.orgId,
      ...(caller.scopes ? { scopes: caller.scopes } : {}),
    },
    created_at: now,
    updated_at: now,
    expires_at: retainedUntil(now),
  };
  // Its organisation's place first (build-slots.ts): past the bound a 429, and nothing is written.
  await takeBuildPlace(planning.org_id, planning.id, build.id);
  try {
    await putAll(mainTableName(), [
      {
        ...buildTasksKey(planning.id, build.id),
        entity: 'route_build_tasks',
        ids: packTaskIds(named.map((t) => t.id)),
        expires_at: build.expires_at,
      },
      buildListing(build),
    ]);
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: {
          ...buildKey(planning.id, build.id),
          // Watched by the requeue sweep (shared/workers/requeue.ts) until it ends, in case its message is lost.
          GSI3PK: activeJobsPartition(planning.org_id),
          GSI3SK: requeueAt(clock.nowMs()),
          entity: 'route_build',
          ...build,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  } catch (error) {
    // A request retried with its Idempotency-Key whose first attempt wrote the build (and lost its answer): that
    // build, which holds the place (its list entry written again as it stands). Any other failure gives the place back.
    const earlier = isConditionalFailure(error) ? await findBuild(planning.id, build.id, true) : undefined;
    if (earlier) {
      await listBuild(earlier);
      return { route_build: toBuildView(earlier) };
    }
    await releaseBuildPlace(planning.org_id, planning.id, build.id);
    throw error;
  }
  await routeQueue().enqueue(routeBuildMessage(build), 0);
  return { route_build: toBuildView(build) };
}

export async function findBuild(planningId: string, buildId: string, consistent = false) {
  const out = await db().send(
    new GetCommand({
      TableName: mainTableName(),
      Key: buildKey(planningId, buildId),
      ...(consistent ? { ConsistentRead: true } : {}),
    }),
  );
  return out.Item as RouteBuild | undefined;
}

/**
 * The stored result of a build (its parts joined), when it has one. X24 reads it eventually consistent (half the
 * units: the parts were written before the build named them), and consistently again should a part not show yet.
 */
export async function readResult(build: RouteBuild, consistent = true): Promise<BuildResult | undefined> {
  if (!build.result_parts) return undefined;
  const parts = await queryAll<{ text: string }>({
    TableName: mainTableName(),
    ...(consistent ? { ConsistentRead: true } : {}),
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': resultPartition(build.id) },
  });
  if (parts.length < build.result_parts) return readResult(build, true);
  return JSON.parse(parts.map((p) => p.text).join('')) as BuildResult;
}

/** The progress of the builds given (one read of their small progress items), by build id. */
async function progressOf(planningId: string, buildIds: string[]): Promise<Map<string, BuildProgress>> {
  const found = await getAll<BuildProgress & { build_id: string }>(
    mainTableName(),
    buildIds.map((id) => buildProgressKey(planningId, id)),
    { ProjectionExpression: 'build_id, progress, updated_at' },
  );
  return new Map(found.map((item) => [item.build_id, item]));
}

/** X24: the build, with its progress while solving (one small read more) and its result once completed. */
export async function readBuild(caller: Caller, planningId: string, buildId: string) {
  await visiblePlanning(caller, planningId);
  const build = await findBuild(planningId, buildId);
  if (!build) throw notFound('route build');
  const result = build.status === 'completed' ? await readResult(build, false) : undefined;
  const progress = build.status === 'solving' ? (await progressOf(planningId, [build.id])).get(build.id) : undefined;
  return { route_build: toBuildView(build, result, progress) };
}

/**
 * X25: newest first, one Query a page of the planning's list entries (each some 400 bytes: 50 in about 3 RCU, where
 * the builds themselves cost 0.5 each at least), without results; the solving ones' progress in one read more.
 */
export async function listBuilds(caller: Caller, planningId: string, page: PageRequest) {
  await visiblePlanning(caller, planningId);
  const found = await queryPage(
    {
      TableName: mainTableName(),
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': buildListPartition(planningId) },
      ScanIndexForward: false,
    },
    page,
    (item) => item['view'] as BuildView,
    undefined,
    async (views) => {
      const solving = views.filter((view) => view.status === 'solving');
      if (solving.length === 0) return views;
      const progress = await progressOf(
        planningId,
        solving.map((view) => view.id),
      );
      return views.map((view) => withProgress(view, progress.get(view.id)));
    },
  );
  return { route_builds: found.items, meta: found.meta };
}

/** A listed build's view with its progress, as X24 shows it (`toBuildView`). */
function withProgress(view: BuildView, progress: BuildProgress | undefined): BuildView {
  if (!progress) return view;
  const updated = progress.updated_at > view.updated_at ? progress.updated_at : view.updated_at;
  return { ...view, updated_at: updated, progress: progress.progress };
}
