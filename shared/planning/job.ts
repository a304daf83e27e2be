/**
 * The planning job (P9 starts it; the work queue runs it). It pairs each runsheet with the drivers nearest its first
 * pickup (the first task's `from_address` coordinates against the drivers' current locations; without coordinates,
 * the planning's driver order), at most `max_candidates` a runsheet, writes each pair's record already broadcast (the
 * created and broadcast events in one write), pushes the offer to the driver, announces it on `planning.<id>`,
 * records the result, and completes.
 */
import { createHash } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { withCapacity } from '#shared/db/capacity';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { conflict } from '#shared/http/problems';
import { newUuid } from '#shared/ids';
import { distanceM } from '#shared/locations/geo';
import { currentPositions } from '#shared/locations/locations';
import { logger } from '#shared/log';
import { sendPushMessages } from '#shared/notifications/push-keys';
import { publish } from '#shared/notifications/realtime';
import { addToGroup, type PairRecord, putNewPair } from '#shared/planning/broadcasts';
import { planningKey } from '#shared/planning/keys';
import {
  changePlanning,
  findPlanning,
  moveJob,
  type Planning,
  planningContents,
  saveJobResult,
  toPlanningView,
  visiblePlanning,
} from '#shared/planning/plannings';
import { type QueuedMessage, queue, registerLocalWorker } from '#shared/ports/queue';
import { publishPartnerEvent } from '#shared/webhooks/deliveries';

export const DRIVER_APPLICATION = () => process.env['DRIVER_APPLICATION_KEY'] ?? 'driver-app';

/** P9: 409 when `version_rev` is stale or a job is queued or running. */
export async function startPlanningJob(
  caller: Caller,
  id: string,
  input: { version_rev: string; max_candidates: number; offer_ttl_s: number },
) {
  const planning = await visiblePlanning(caller, id);
  if (planning.job && ['queued', 'processing'].includes(planning.job.current_status)) {
    throw conflict('a job of this planning is already queued or running');
  }
  const now = clock.nowIso();
  const job = {
    id: newUuid(),
    current_status: 'queued' as const,
    statuses: [{ status: 'queued' as const, set_at_utc: now }],
    status_updated_at: now,
    max_candidates: input.max_candidates,
    offer_ttl_s: input.offer_ttl_s,
  };
  const started = await changePlanning(planning, input.version_rev, { job, last_executed_at_server_time: now });
  await queue().enqueue({ kind: 'planning', planning_id: id, job_id: job.id }, 0);
  return toPlanningView(started);
}

interface Candidate {
  id: string;
  position: number;
  location?: { latitude: number; longitude: number };
}

function firstPickup(tasks: Record<string, unknown>[]): { latitude: number; longitude: number } | undefined {
  const address = (tasks[0]?.['from_address'] ?? undefined) as { latitude?: number; longitude?: number } | undefined;
  return typeof address?.latitude === 'number' && typeof address.longitude === 'number'
    ? { latitude: address.latitude, longitude: address.longitude }
    : undefined;
}

/** The candidates of one runsheet: nearest located drivers first, then the rest in planning order. */
export function rankDrivers(
  drivers: Candidate[],
  pickup: { latitude: number; longitude: number } | undefined,
  limit: number,
) {
  if (!pickup) return drivers.slice(0, limit);
  return [...drivers]
    .map((driver) => ({
      driver,
      distance: driver.location ? distanceM(pickup, driver.location) : Number.POSITIVE_INFINITY,
    }))
    .sort((a, b) => a.distance - b.distance || a.driver.position - b.driver.position)
    .slice(0, limit)
    .map((ranked) => ranked.driver);
}

export const JOB_LEASE_MS = 15 * 60 * 1000;
export const MAX_JOB_ATTEMPTS = 3;

/**
 * Takes the job for this worker: from `queued`, or from a `processing` job whose lease ran out (its worker died).
 * Undefined when another worker holds it or it has ended.
 */
async function claimJob(planning: Planning, jobId: string): Promise<Planning | undefined> {
  const job = planning.job;
  if (!job || job.id !== jobId) return undefined;
  const lease = clock.nowMs() + JOB_LEASE_MS;
  const now = clock.nowIso();
  let update: {
    UpdateExpression: string;
    ConditionExpression: string;
    ExpressionAttributeValues: Record<string, unknown>;
  };
  if (job.current_status === 'queued') {
    update = {
      UpdateExpression:
        'SET job.current_status = :processing, job.status_updated_at = :now, job.statuses = list_append(job.statuses, :entry), job.lease_until = :lease, job.attempts = :one',
      ConditionExpression: 'job.id = :job AND job.current_status = :queued',
      ExpressionAttributeValues: {
        ':job': jobId,
        ':lease': lease,
        ':processing': 'processing',
        ':queued': 'queued',
        ':now': now,
        ':entry': [{ status: 'processing', set_at_utc: now }],
        ':one': 1,
      },
    };
  } else if (job.current_status === 'processing') {
    update = {
      UpdateExpression: 'SET job.lease_until = :lease, job.attempts = job.attempts + :one',
      ConditionExpression: 'job.id = :job AND job.current_status = :processing AND job.lease_until < :nowMs',
      ExpressionAttributeValues: {
        ':job': jobId,
        ':lease': lease,
        ':processing': 'processing',
        ':nowMs': clock.nowMs(),
        ':one': 1,
      },
    };
  } else {
    return undefined;
  }
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: planningKey(planning.id),
        ...update,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes as Planning;
  } catch (error) {
    if (isConditionalFailure(error)) return undefined;
    throw error;
  }
}

/** A pair's id follows from the job, the runsheet and the driver, so a rerun finds the pairs it already wrote. */
export function pairIdOf(jobId: string, runsheetId: string, driverId: string): string {
  const hex = createHash('sha256').update(`${jobId}\u0000${runsheetId}\u0000${driverId}`).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 3) | 8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The worker: one run of one planning job. Writes per pair: one record; the result and statuses once. A run that
 * dies is taken over when its lease lapses and rewrites nothing it wrote; after three runs the job fails.
 */
export async function runPlanningJob(message: QueuedMessage): Promise<{ pairs: number } | undefined> {
  const { result, tally } = await withCapacity(() => runJob(message), 'planning-job');
  logger.info('planning job run', { planning_id: message['planning_id'], capacity: tally });
  return result;
}

async function runJob(message: QueuedMessage): Promise<{ pairs: number } | undefined> {
  const planning = await findPlanning(String(message['planning_id']));
  if (!planning) return undefined;
  const current = await claimJob(planning, String(message['job_id']));
  if (!current) return undefined;
  const startTime = clock.nowIso();
  const job = current.job!;
  try {
    const { runsheets, drivers } = await planningContents(planning.id);
    const locations = await currentPositions(drivers.map((d) => d.id));
    const candidates: Candidate[] = drivers.map((d, position) => ({
      id: d.id,
      position,
      ...(locations.has(d.id) ? { location: locations.get(d.id)! } : {}),
    }));
    const now = clock.nowIso();
    const expires = new Date(clock.nowMs() + job.offer_ttl_s * 1000).toISOString();
    let pairs = 0;
    const offers = new Map<string, string[]>();
    for (const runsheet of runsheets) {
      const written: { id: string; driverId: string }[] = [];
      const listed: string[] = [];
      for (const driver of rankDrivers(candidates, firstPickup(runsheet.tasks), job.max_candidates)) {
        const record: PairRecord = {
          id: pairIdOf(job.id, runsheet.id, driver.id),
          // The runsheet is the planning's: R1/R2 fill in its tasks, the record keeps it small.
          pair: {
            id: '',
            runsheet: { id: runsheet.id, ...(runsheet.name ? { name: runsheet.name } : {}), tasks: [] },
            driver: { id: driver.id },
          },
          plan: { id: planning.id, name: planning.name },
          statuses: [
            {
              current_state: 'created',
              action: 'created',
              reason: null,
              expired_time: null,
              happened_at_utc: now,
              saved_at_utc: now,
            },
            {
              current_state: 'broadcasted',
              action: 'broadcast',
              reason: null,
              expired_time: expires,
              happened_at_utc: now,
              saved_at_utc: now,
            },
          ],
          current_state: 'broadcasted',
          org_id: planning.org_id,
          rev: 2,
          offer_ttl_s: job.offer_ttl_s,
          runsheet_ref: true,
          group_swept: true,
        };
        record.pair.id = record.id;
        pairs++;
        listed.push(record.id);
        // A rerun after a crash must not overwrite a pair a driver has answered since.
        if (await putNewPair(record)) written.push({ id: record.id, driverId: driver.id });
      }
      // After its pairs, the runsheet's offer group lists them and carries their expiry for the sweep (a rerun
      // lists them again: the list is a set).
      await addToGroup(planning.id, runsheet.id, listed, expires);
      for (const { id: pairId, driverId } of written) {
        offers.set(driverId, [...(offers.get(driverId) ?? []), pairId]);
        await publish(`planning.${planning.id}`, 'pair.broadcast', {
          pair_id: pairId,
          runsheet_id: runsheet.id,
          driver_id: driverId,
          expired_time: expires,
        });
      }
    }
    // One push per driver, however many runsheets are offered to them.
    const messages = [...offers].map(([driverId, pairIds]) => ({
      user_id: driverId,
      title: 'New runsheets offered',
      body: `${pairIds.length} runsheet${pairIds.length === 1 ? '' : 's'} of ${planning.name} await your answer`,
      data: { planning_id: planning.id, pair_ids: pairIds },
    }));
    for (let i = 0; i < messages.length; i += 500) {
      await sendPushMessages({ application_key: DRIVER_APPLICATION(), push_messages: messages.slice(i, i + 500) });
    }
    await saveJobResult(current, {
      planning_job_id: job.id,
      total_pairs_counted: pairs,
      total_runsheets_counted: runsheets.length,
      total_drivers_counted: drivers.length,
      start_time: startTime,
      end_time: clock.nowIso(),
    }).catch((error: unknown) => {
      if ((error as { status?: number }).status !== 409) throw error;
    });
    const done = await moveJob(current, 'completed');
    await announce(done, 'completed');
    return { pairs };
  } catch (error) {
    logger.error('planning job run failed', { planning_id: planning.id, attempt: job.attempts, error: error as Error });
    const latest = await findPlanning(planning.id);
    if (latest?.job?.id !== job.id || latest.job.current_status !== 'processing') return undefined;
    if ((job.attempts ?? 1) >= MAX_JOB_ATTEMPTS) {
      await announce(await moveJob(latest, 'failed'), 'failed');
      return undefined;
    }
    // Let the lease lapse so that the queue's retry can take the job over.
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: planningKey(planning.id),
        UpdateExpression: 'SET job.lease_until = :past',
        ExpressionAttributeValues: { ':past': clock.nowMs() - 1 },
      }),
    );
    throw error;
  }
}

async function announce(planning: Planning, status: string) {
  await publish(`planning.${planning.id}`, 'planning_job.status', { planning_job_id: planning.job?.id, status });
  if (status === 'completed')
    await publishPartnerEvent(planning.org_id, 'planning_job.completed', {
      planning_id: planning.id,
      planning_job_id: planning.job?.id,
    });
}

/** P13–P16: an external worker (or SysAdmin) moves the job; P16 (cancel) also for planning readers. */
export async function moveJobByRequest(
  caller: Caller,
  id: string,
  to: 'processing' | 'completed' | 'failed' | 'cancelled',
) {
  const planning = await visiblePlanning(caller, id);
  const moved = await moveJob(planning, to);
  if (to !== 'processing') await announce(moved, to);
  return moved;
}

registerLocalWorker('planning', async (message) => {
  await runPlanningJob(message);
});
