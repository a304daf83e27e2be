/**
 * The planning job (P9 starts it; the work queue runs it). It pairs each runsheet with the drivers nearest its first
 * pickup (the first task's `from_address` coordinates against the drivers' current locations; without coordinates,
 * the planning's driver order), at most `max_candidates` a runsheet, writes each pair's record already broadcast (the
 * created and broadcast events in one write), pushes the offer to the driver, announces it on `planning.<id>`,
 * records the result, and completes.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, locationsTableName, mainTableName } from '#shared/db/client';
import { conflict } from '#shared/http/problems';
import { newUuid } from '#shared/ids';
import { distanceM } from '#shared/locations/geo';
import { logger } from '#shared/log';
import { sendPushMessages } from '#shared/notifications/push-keys';
import { publish } from '#shared/notifications/realtime';
import { type PairRecord, pairItem } from '#shared/planning/broadcasts';
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

async function driverLocations(ids: string[]): Promise<Map<string, { latitude: number; longitude: number }>> {
  const found = new Map<string, { latitude: number; longitude: number }>();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(16, ids.length) }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        const out = await db().send(
          new GetCommand({
            TableName: locationsTableName(),
            Key: { PK: `LOC#${id}`, SK: 'CURRENT' },
            ProjectionExpression: 'latitude, longitude',
          }),
        );
        if (out.Item)
          found.set(id, { latitude: Number(out.Item['latitude']), longitude: Number(out.Item['longitude']) });
      }
    }),
  );
  return found;
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

/** The worker: one run of one planning job. Writes per pair: one record; the result and statuses once. */
export async function runPlanningJob(message: QueuedMessage): Promise<{ pairs: number } | undefined> {
  const planning = await findPlanning(String(message['planning_id']));
  if (!planning?.job || planning.job.id !== message['job_id'] || planning.job.current_status !== 'queued')
    return undefined;
  let current: Planning;
  try {
    current = await moveJob(planning, 'processing');
  } catch (error) {
    if ((error as { status?: number }).status === 409) return undefined;
    throw error;
  }
  const startTime = clock.nowIso();
  const job = current.job!;
  try {
    const { runsheets, drivers } = await planningContents(planning.id);
    const locations = await driverLocations(drivers.map((d) => d.id));
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
      for (const driver of rankDrivers(candidates, firstPickup(runsheet.tasks), job.max_candidates)) {
        const record: PairRecord = {
          id: newUuid(),
          pair: {
            id: '',
            runsheet: { id: runsheet.id, ...(runsheet.name ? { name: runsheet.name } : {}), tasks: runsheet.tasks },
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
        };
        record.pair.id = record.id;
        await db().send(new PutCommand({ TableName: mainTableName(), Item: pairItem(record) }));
        pairs++;
        offers.set(driver.id, [...(offers.get(driver.id) ?? []), record.id]);
        await publish(`planning.${planning.id}`, 'pair.broadcast', {
          pair_id: record.id,
          runsheet_id: runsheet.id,
          driver_id: driver.id,
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
    logger.error('planning job failed', { planning_id: planning.id, error: error as Error });
    const latest = await findPlanning(planning.id);
    if (latest?.job?.current_status === 'processing') await announce(await moveJob(latest, 'failed'), 'failed');
    return undefined;
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
