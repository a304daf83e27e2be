/**
 * The planning job as its planning stores it (P10–P16): its moves along lifecycle.ts's machine (`moveJob`, judged
 * again against the job as it is when a worker moved it meanwhile), the marks that say a move was told (job.ts
 * `announce`), its one result (P10, P11) and its status view.
 */

import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { moveCurrent } from '#shared/db/moves';
import { conflict, invalidAt, notFound } from '#shared/errors';
import { newUuid } from '#shared/ids';
import { planningKey } from '#shared/planning/keys';
import { askJob } from '#shared/planning/lifecycle';
import { findPlanning, type JobStatus, type Planning, visiblePlanning } from '#shared/planning/planning-records';

/** The planning job's status view (P12–P16). */
export function jobStatusView(planning: Planning) {
  const job = planning.job;
  if (!job) throw notFound('planning job');
  return {
    id: job.id,
    planning_job_id: job.id,
    current_status: job.current_status,
    status_updated_at: job.status_updated_at,
    statuses: job.statuses,
    server_time: clock.nowIso(),
  };
}

/**
 * Moves the job along its machine (P13–P16, and the job runner); an illegal move is 409. When the job moved between
 * the read and the write (a worker took it), the move is judged again against the job as it is now
 * (shared/db/moves.ts): still legal, it is written; illegal from there, 409 naming the job's status.
 */
export async function moveJob(planning: Planning, to: JobStatus): Promise<Planning> {
  const jobId = planning.job?.id;
  if (!jobId) throw notFound('planning job');
  return moveCurrent(
    planning,
    async (current) => {
      const job = current.job;
      if (!job || job.id !== jobId) throw conflict('the planning job was replaced by another meanwhile');
      askJob(job.current_status, to);
      const now = clock.nowIso();
      const out = await db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: planningKey(planning.id),
          UpdateExpression:
            'SET job.current_status = :to, job.status_updated_at = :now, job.statuses = list_append(job.statuses, :entry), job.announced = :false REMOVE GSI3PK, GSI3SK',
          ConditionExpression: 'job.id = :job AND job.current_status = :from',
          ExpressionAttributeValues: {
            ':to': to,
            ':now': now,
            ':entry': [{ status: to, set_at_utc: now }],
            ':job': jobId,
            ':from': job.current_status,
            ':false': false,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes as Planning;
    },
    {
      reread: () => findPlanning(planning.id, true),
      gone: () => notFound('planning'),
      contended: () => conflict('the planning job kept changing; retry'),
    },
  );
}

const resultKey = (planningId: string, jobId: string) => ({ PK: `PLANNING#${planningId}`, SK: `RESULT#${jobId}` });
const announcedKey = (planningId: string, jobId: string) => ({
  PK: `PLANNING#${planningId}`,
  SK: `ANNOUNCED#${jobId}`,
});

/** Whether the job's last move is still to be told: the move set `announced: false` and no mark names its status. */
export async function announcePending(planning: Planning): Promise<boolean> {
  const job = planning.job;
  if (job?.announced !== false) return false;
  const out = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: announcedKey(planning.id, job.id), ConsistentRead: true }),
  );
  return out.Item?.['status'] !== job.current_status;
}

/** Marks the job's move to `status` as told (job.ts `announce`). */
export async function markAnnounced(planning: Planning, status: string): Promise<void> {
  if (!planning.job) return;
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: { ...announcedKey(planning.id, planning.job.id), entity: 'planning_job_announced', status },
    }),
  );
}

/** P10: one result per job (`recordJobResult` for a caller, `saveJobResult` for the built-in job). */
export async function saveJobResult(
  planning: Planning,
  result: {
    planning_job_id: string;
    total_pairs_counted: number;
    total_runsheets_counted: number;
    total_drivers_counted: number;
    start_time: string;
    end_time: string;
  },
) {
  if (!planning.job || planning.job.id !== result.planning_job_id)
    throw invalidAt('planning_job_id', "is not this planning's job");
  const record = {
    id: newUuid(),
    ...result,
    start_time: new Date(result.start_time).toISOString(),
    end_time: new Date(result.end_time).toISOString(),
  };
  try {
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: { ...resultKey(planning.id, result.planning_job_id), entity: 'planning_result', ...record },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  } catch (error) {
    if (isConditionalFailure(error)) throw conflict('the planning job already has a result');
    throw error;
  }
  return { ...record, server_time: clock.nowIso() };
}

export async function recordJobResult(caller: Caller, id: string, result: Parameters<typeof saveJobResult>[1]) {
  return saveJobResult(await visiblePlanning(caller, id), result);
}

/** P11. */
export async function readJobResult(caller: Caller, id: string) {
  const planning = await visiblePlanning(caller, id);
  if (!planning.job) throw notFound('planning job result');
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: resultKey(id, planning.job.id) }));
  if (!out.Item) throw notFound('planning job result');
  const { PK: _pk, SK: _sk, entity: _e, ...result } = out.Item;
  return { ...result, server_time: clock.nowIso() };
}
