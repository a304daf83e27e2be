/**
 * X31 (contract 4.10): a completed dry run applied exactly as it was answered. Its stored result (the same runsheets,
 * stops and planned times X24 answered) is added to the planning by the very apply a build makes (apply.ts
 * `applyResult`), once, and only while the planning is as it was when the dry run began.
 *
 * The refusals, in the order they are judged: another organisation's planning or an unknown build is a 404; a build
 * that is not a completed dry run a 409; one applied already a 409 (`applied_at`); one asked for more than
 * `DRY_RUN_APPLY_HOURS` ago a 410 (its result is kept 30 days for X24, but the day it planned has moved on); a stale
 * `version_rev`, or a planning moved since the dry run began, a 409 `planning_changed`; a task of the result in a
 * runsheet now (of any planning) a 409 naming it.
 *
 * Exactly once: the planning's version moves in one transaction with the build marked applied on the condition that
 * no apply marked it before (apply.ts `ApplyHold`), so of two applies racing one wins and the other is a 409. The
 * winner holds the build by its `apply_owner`: the caller and its `Idempotency-Key`. A request that failed after the
 * transaction (a dependency's fault) is finished by its retry with the same key, whose every write is whole (as a
 * rerun build's is). A task claimed elsewhere between the check and the claim frees what was claimed and lets the
 * build go: the planning has moved, so a later apply is `planning_changed`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { conflict, DomainError, gone, notFound } from '#shared/errors';
import { publishEvent } from '#shared/notifications/realtime';
import { visiblePlanning } from '#shared/planning/planning-records';
import { type ApplyHold, applyResult, builtRunsheets, loadBuildTasks, planningChanged } from '#shared/routing/apply';
import { applyInsertion, splitInsertion } from '#shared/routing/apply-insertion';
import { findBuild, listBuild, type RouteBuild, readResult, toBuildView } from '#shared/routing/builds';
import { buildKey } from '#shared/routing/keys';
import type { ApplyBuildInput, BuildResult } from '#shared/routing/schemas';
import { publishPartnerEvent } from '#shared/webhooks/deliveries';

/** A dry run may be applied this long after it was asked for (contract 4.10: then 410). */
export const DRY_RUN_APPLY_HOURS = 24;

/** The apply that holds a build: the caller and its Idempotency-Key (a retry with it finishes), else this request alone. */
export const applyOwner = (caller: Caller, idempotencyKey: string | undefined) =>
  idempotencyKey === undefined
    ? randomUUID()
    : createHash('sha256').update(`${caller.kind}:${caller.id}\n${idempotencyKey}`).digest('hex').slice(0, 32);

const appliedAlready = (build: RouteBuild) =>
  conflict(
    `this dry run was applied already (at ${build.applied_at}): its runsheets are in the planning; a dry run is applied once`,
  );

/** The build as stored now (consistently): whose apply holds it. */
async function heldBy(build: RouteBuild): Promise<RouteBuild> {
  const now = await findBuild(build.planning_id, build.id, true);
  if (!now) throw notFound('route build');
  return now;
}

/** Marks the build applied in the planning's transaction, unless an apply marked it before (`ApplyHold`). */
function holdFor(build: RouteBuild, owner: string, appliedAt: string): ApplyHold {
  const other = async () => {
    const now = await heldBy(build);
    if (now.applied_at && now.apply_owner !== owner) throw appliedAlready(now);
  };
  return {
    items: [
      {
        Update: {
          TableName: mainTableName(),
          Key: buildKey(build.planning_id, build.id),
          UpdateExpression: 'SET applied_at = :at, apply_owner = :owner, updated_at = :at',
          ConditionExpression: '#status = :completed AND attribute_not_exists(applied_at)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':at': appliedAt, ':owner': owner, ':completed': 'completed' },
        },
      },
    ],
    mayResume: other,
    refused: other,
  };
}

/** Lets the build go after its apply was refused past the transaction (nothing added): a later one is judged anew. */
async function letGo(build: RouteBuild, owner: string) {
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: buildKey(build.planning_id, build.id),
        UpdateExpression: 'REMOVE applied_at, apply_owner',
        ConditionExpression: 'apply_owner = :owner',
        ExpressionAttributeValues: { ':owner': owner },
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}

/**
 * The tasks the result places, each once, in the order the result first names them: a build's every task; an
 * insertion's (X30) the tasks it adds to a live runsheet (`added[]`) and those of its new runsheets, never the tasks
 * a live runsheet already held (they are in it, as they were when the dry run began: the planning has not moved).
 */
const plannedTaskIds = (build: RouteBuild, result: BuildResult) => {
  if (build.kind !== 'insertion')
    return [...new Set(result.runsheets.flatMap((r) => r.stops.map((stop) => stop.task_id)))];
  const { changed, fresh } = splitInsertion(build, result);
  return [
    ...new Set([
      ...changed.flatMap((r) => r.added ?? []),
      ...fresh.flatMap((r) => r.stops.map((stop) => stop.task_id)),
    ]),
  ];
};

/** X31. */
export async function applyDryRun(
  caller: Caller,
  planningId: string,
  buildId: string,
  input: ApplyBuildInput,
  owner: string,
) {
  const planning = await visiblePlanning(caller, planningId);
  const build = await findBuild(planning.id, buildId, true);
  if (!build) throw notFound('route build');
  if (!build.request.dry_run)
    throw conflict('this build was not a dry run: it added its runsheets itself when it completed (X24 shows them)');
  if (build.status !== 'completed')
    throw conflict(
      `this dry run is ${build.status}: only a completed dry run can be applied${build.status === 'failed' ? '; build again' : ' (read it with X24 until it is)'}`,
    );
  const resuming = build.applied_at !== undefined && build.apply_owner === owner;
  if (build.applied_at && !resuming) throw appliedAlready(build);
  const expiresMs = Date.parse(build.created_at) + DRY_RUN_APPLY_HOURS * 3600_000;
  if (!resuming && clock.nowMs() >= expiresMs)
    throw gone(
      `this dry run's result expired at ${new Date(expiresMs).toISOString()} (${DRY_RUN_APPLY_HOURS} hours after it was asked for): build again`,
    );
  if (!resuming && input.version_rev !== planning.version_rev)
    throw planningChanged(
      'version_rev is stale: read the planning again, and build again if it moved since the dry run',
    );
  if (!resuming && planning.version_rev !== build.base_rev)
    throw planningChanged(
      `the planning changed since this dry run began (version ${build.base_rev.split('-')[0]} then, ${planning.version_seq} now): nothing was added; build again`,
    );
  const result = await readResult(build);
  if (!result) throw conflict('this dry run has no result to apply: build again');
  const ids = plannedTaskIds(build, result);
  // Consistently: a task planned a moment ago (P5, X23, X30, another planning's) is refused here, by name.
  const tasks = await loadBuildTasks(ids, true);
  const byId = new Map(tasks.map((t) => [String(t.item['id']), t]));
  if (!resuming)
    for (const id of ids) {
      const task = byId.get(id)?.item;
      if (!task) throw conflict(`task ${id} of this dry run is no longer there: nothing was added; build again`);
      if (task['planning_id'] !== undefined)
        throw conflict(
          `task ${task['task_ref'] ?? id} (${id}) is in runsheet ${task['runsheet_id']} of planning ${task['planning_id']} now: nothing was added; build again without it`,
        );
    }
  const appliedAt = resuming ? build.applied_at! : clock.nowIso();
  // The apply assigns a driver's runsheet as X16 would, as the planner who applies it.
  const applier: RouteBuild = { ...build, caller: callerRecord(caller) };
  try {
    const hold = holdFor(build, owner, appliedAt);
    // An insertion's dry run (X30) adds to the live runsheets as its own apply would have.
    if (build.kind === 'insertion') await applyInsertion(applier, result, byId, build.request.travel, hold);
    else await applyResult(applier, builtRunsheets(result, byId), result, hold);
  } catch (error) {
    // A task claimed elsewhere meanwhile: the claims were undone and nothing was added.
    if (error instanceof DomainError && error.code === 'planning_changed') await letGo(build, owner);
    throw error;
  }
  const applied = await heldBy(build);
  await listBuild(applied);
  await announceApplied(applied);
  return { route_build: toBuildView(applied, result) };
}

const callerRecord = (caller: Caller): Caller => ({
  kind: caller.kind,
  id: caller.id,
  roles: caller.roles,
  orgId: caller.orgId,
  ...(caller.scopes ? { scopes: caller.scopes } : {}),
});

/**
 * `route_build.completed` once more, now with `applied_at`, on the planning's channel and to partners: what a build
 * tells once it added its runsheets (its own key, so the dry run's first telling is no duplicate of it).
 */
async function announceApplied(build: RouteBuild) {
  const data = {
    planning_id: build.planning_id,
    route_build_id: build.id,
    status: 'completed' as const,
    dry_run: true,
    applied_at: build.applied_at!,
    ...(build.summary ? { summary: build.summary } : {}),
  };
  const key = `${build.id}:applied`;
  await publishEvent(`planning.${build.planning_id}`, 'route_build.completed', { key, data });
  await publishPartnerEvent(build.org_id, 'route_build.completed', data, key);
}
