/**
 * Route builds (contract 4.10): X23 checks the request and queues a build, X24 reads one, X25 lists a planning's.
 * A build is a record of its own (`ROUTES#<planning>` / `BUILD#<id>`, keys.ts): its request as checked (the task ids
 * resolved), the planning's `version_rev` it was asked against, the caller it acts for, its status, lease and
 * progress; its result is stored in parts (keys.ts) once solved. The worker (worker.ts) runs it from the route queue.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, getAll, isConditionalFailure, mainTableName, queryAll } from '#shared/db/client';
import { type PageRequest, queryPage } from '#shared/db/paging';
import { conflict, invalidAt, notFound } from '#shared/errors';
import { recordUuid } from '#shared/ids';
import { findJob } from '#shared/imports/jobs';
import { checkClaims, jobTaskRanges, taskIdOf } from '#shared/imports/tasks';
import { planningDriverKey } from '#shared/planning/keys';
import { visiblePlanning } from '#shared/planning/plannings';
import { type QueuedMessage, routeQueue } from '#shared/ports/queue';
import { releaseBuildPlace, takeBuildPlace } from '#shared/routing/build-slots';
import { buildKey, buildListKeys, buildListPartition, resultPartition } from '#shared/routing/keys';
import type { BuildResult, CreateBuildInput } from '#shared/routing/schemas';
import { MAX_TASKS } from '#shared/routing/schemas';
import { activeJobsPartition, requeueAt } from '#shared/workers/active-jobs';

export type BuildStatus = 'queued' | 'solving' | 'completed' | 'failed';

/** A build as stored (its keys aside). */
export interface RouteBuild {
  id: string;
  planning_id: string;
  org_id: string;
  status: BuildStatus;
  /** The request as X23 checked it, with the task ids resolved (an import job's tasks named one by one). */
  request: Omit<CreateBuildInput, 'task_ids' | 'import_job_id'> & { import_job_id?: string };
  task_ids: string[];
  /** Total vehicles, each `count` expanded. */
  vehicle_count: number;
  /** The planning's `version_rev` when the build was asked for: any other change since fails it (planning_changed). */
  base_rev: string;
  /** Who asked: the build assigns runsheets (X16) as them. */
  caller: Caller;
  created_at: string;
  updated_at: string;
  progress?: { best_distance_m: number; elapsed_ms: number };
  error?: { code: string; detail: string };
  summary?: BuildResult['summary'];
  /** The result is stored (its parts): a rerun after it applies it instead of solving again. */
  result_parts?: number;
  lease_until?: number;
  lease_owner?: string;
  attempts?: number;
  /** Whether the end (completed or failed) was told on the channel and to partners. */
  announced?: boolean;
}

/** X24/X25's view of a build: never its keys, lease, caller or request internals. */
export function toBuildView(build: RouteBuild, result?: BuildResult) {
  return {
    id: build.id,
    planning_id: build.planning_id,
    status: build.status,
    dry_run: build.request.dry_run,
    objective: build.request.objective,
    time_limit_s: build.request.time_limit_s,
    tasks: build.task_ids.length,
    vehicles: build.vehicle_count,
    created_at: build.created_at,
    updated_at: build.updated_at,
    ...(build.status === 'solving' && build.progress ? { progress: build.progress } : {}),
    ...(build.error ? { error: build.error } : {}),
    ...(build.summary ? { summary: build.summary } : {}),
    ...(result ? { result } : {}),
  };
}

/** The tasks X23 names: `task_ids` as given, or an import job's tasks (each at the path it was named at). */
async function namedTasks(orgId: string, input: CreateBuildInput): Promise<{ id: string; path: string }[]> {
  if (input.task_ids) {
    const seen = new Set<string>();
    return input.task_ids.map((id, j) => {
      if (seen.has(id)) throw invalidAt(`task_ids[${j}]`, 'repeats an earlier task of this request');
      seen.add(id);
      return { id, path: `task_ids[${j}]` };
    });
  }
  const job = await findJob(input.import_job_id!);
  if (!job || job.org_id !== orgId)
    throw invalidAt('import_job_id', "names no import job of the planning's organisation");
  const range = jobTaskRanges(orgId, job)[0];
  // The index holds keys only (shared/db/tables.ts): each task's id is read from its table key.
  const items = await queryAll<{ PK: string }>({
    TableName: mainTableName(),
    IndexName: range.index,
    KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :job)',
    ExpressionAttributeValues: { ':pk': range.partition, ':job': range.prefix },
    ProjectionExpression: 'PK',
  });
  if (items.length === 0) throw invalidAt('import_job_id', 'has no imported tasks');
  if (items.length > MAX_TASKS)
    throw invalidAt(
      'import_job_id',
      `has ${items.length} tasks, past the ${MAX_TASKS} one build may plan: name them with task_ids`,
    );
  return items.map((item) => ({ id: taskIdOf(item), path: 'import_job_id' }));
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
  const named = await namedTasks(planning.org_id, input);
  // As P5 (contract 4.6): an unknown task is a 400, one in a runsheet (of any planning) a 409, each at its path.
  await checkClaims(
    planning.org_id,
    planning.id,
    named.map((t) => ({ runsheetId: '', taskId: t.id, path: t.path })),
  );
  const drivers = input.vehicles.flatMap((vehicle, i) => (vehicle.driver_id ? [{ id: vehicle.driver_id, i }] : []));
  if (drivers.length > 0) {
    const found = await getAll<{ id: string }>(
      mainTableName(),
      drivers.map((d) => planningDriverKey(planning.id, d.id)),
      { ProjectionExpression: 'id' },
    );
    const known = new Set(found.map((d) => d.id));
    for (const d of drivers)
      if (!known.has(d.id))
        throw invalidAt(`vehicles[${d.i}].driver_id`, 'is not a driver of this planning (add them with P7 first)');
  }
  const now = clock.nowIso();
  const { task_ids: _ids, import_job_id: jobId, ...request } = input;
  const build: RouteBuild = {
    id: recordUuid(),
    planning_id: planning.id,
    org_id: planning.org_id,
    status: 'queued',
    request: { ...request, ...(jobId ? { import_job_id: jobId } : {}) },
    task_ids: named.map((t) => t.id),
    vehicle_count: input.vehicles.reduce((sum, vehicle) => sum + (vehicle.count ?? 1), 0),
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
  };
  // Its organisation's place first (build-slots.ts): past the bound a 429, and nothing is written.
  await takeBuildPlace(planning.org_id, planning.id, build.id);
  try {
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: {
          ...buildKey(planning.id, build.id),
          ...buildListKeys(planning.id, now, build.id),
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
    // build, which holds the place. Any other failure gives the place back.
    const earlier = isConditionalFailure(error) ? await findBuild(planning.id, build.id, true) : undefined;
    if (earlier) return { route_build: toBuildView(earlier) };
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

/** The stored result of a build (its parts joined), when it has one. */
export async function readResult(build: RouteBuild): Promise<BuildResult | undefined> {
  if (!build.result_parts) return undefined;
  const parts = await queryAll<{ text: string }>({
    TableName: mainTableName(),
    ConsistentRead: true,
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': resultPartition(build.id) },
  });
  return JSON.parse(parts.map((p) => p.text).join('')) as BuildResult;
}

/** X24. */
export async function readBuild(caller: Caller, planningId: string, buildId: string) {
  await visiblePlanning(caller, planningId);
  const build = await findBuild(planningId, buildId);
  if (!build) throw notFound('route build');
  const result = build.status === 'completed' ? await readResult(build) : undefined;
  return { route_build: toBuildView(build, result) };
}

/** X25: newest first, one Query of GSI1 a page, without results. */
export async function listBuilds(caller: Caller, planningId: string, page: PageRequest) {
  await visiblePlanning(caller, planningId);
  const found = await queryPage(
    {
      TableName: mainTableName(),
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': buildListPartition(planningId) },
      ScanIndexForward: false,
    },
    page,
    (item) => toBuildView(item as unknown as RouteBuild),
  );
  return { route_builds: found.items, meta: found.meta };
}
