/**
 * The planning job (P9 starts it; the work queue runs it). It pairs the planning's runsheets with its drivers as a
 * whole (shared/planning/pairing.ts: first candidates by a minimum-total-distance assignment, further ones nearest
 * first, offers spread), at most `max_candidates` a runsheet, writes each pair's record already broadcast (the
 * created and broadcast events in one write), pushes the offer to the driver, announces it on `planning.<id>`,
 * records the result, and completes.
 */
import { randomUUID } from 'node:crypto';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { mapLimited } from '#shared/concurrency';
import { mainTableName } from '#shared/db/client';
import { queryPartitions } from '#shared/db/shards';
import { conflict, isDomainError } from '#shared/errors';
import { recordUuid } from '#shared/ids';
import { logger } from '#shared/log';
import { frame, publish, toPartners } from '#shared/planning/announcements';
import { dispatchCounts, planningRecords, runsheetStatus } from '#shared/planning/dispatch-records';
import { exclusionOf } from '#shared/planning/eligibility';
import { addFirstWave, type FirstWave, putFirstGroups, putFirstOffers } from '#shared/planning/first-offers';
import { announcePending, markAnnounced, moveJob, saveJobResult } from '#shared/planning/job-records';
import { groupKey, groupRunsheetIdOf, pairIdOf, planningKey, planPartitions } from '#shared/planning/keys';
import { askNewJob } from '#shared/planning/lifecycle';
import {
  broadcastAnnouncements,
  type DriverOffer,
  driverOffer,
  runOfferAnnouncements,
} from '#shared/planning/offer-announcements';
import { watchOffers } from '#shared/planning/offer-expiry';
import { groupPairIds, type OfferListing } from '#shared/planning/offer-groups';
import { type PairRecord, putNewPair, readPair, servicePair } from '#shared/planning/pair-records';
import { pairCandidates } from '#shared/planning/pairing';
import { findPlanning, type Planning, planningContents, visiblePlanning } from '#shared/planning/planning-records';
import { changePlanning, toPlanningView } from '#shared/planning/plannings';
import { dispatchRunsheet, driverFacts, parametersOf, runsheetsWon } from '#shared/planning/wave-drivers';
import { type QueuedMessage, queue, registerLocalWorker } from '#shared/ports/queue';
import { activeJobsPartition, requeueAt } from '#shared/workers/active-jobs';
import { failRun, finishJob } from '#shared/workers/endings';
import { claimLease, type LeasedRecord, MAX_ATTEMPTS } from '#shared/workers/lease';

export const DRIVER_APPLICATION = () => process.env['DRIVER_APPLICATION_KEY'] ?? 'driver-app';

/** P9: 409 when `version_rev` is stale or a job is queued or running. */
export async function startPlanningJob(
  caller: Caller,
  id: string,
  input: {
    version_rev: string;
    max_candidates: number;
    offer_ttl_s: number;
    max_waves: number;
    max_runsheets_per_driver: number;
    max_location_age_s: number;
  },
) {
  const planning = await visiblePlanning(caller, id);
  // The job's id derives from the request's Idempotency-Key when it has one (shared/ids.ts): the retry of a start whose
  // answer was lost after the job was queued finds its own job and answers it, where it would have met a 409. Its
  // message may have been lost with the answer: a second one is harmless (the worker's claim takes a job once).
  const jobId = recordUuid();
  if (planning.job?.id === jobId) {
    await queue().enqueue({ kind: 'planning', planning_id: id, job_id: jobId }, 0);
    return toPlanningView(planning);
  }
  askNewJob(planning.job?.current_status);
  // A job with nothing to pair would complete at once having offered nothing: say what is missing instead. The counts
  // are the planning's at `version_rev`, and the start is conditional on it, so a P5/P7 in between makes it a 409 too.
  const missing = [
    ...(planning.total_runsheets === 0 ? ['no runsheets (add them with P5 POST …/runsheets)'] : []),
    ...(planning.total_drivers === 0 ? ['no drivers (add them with P7 POST …/drivers)'] : []),
  ];
  if (missing.length > 0) {
    throw conflict(`this planning has ${missing.join(' and ')}: a job would have nothing to offer`);
  }
  const now = clock.nowIso();
  const job = {
    id: jobId,
    current_status: 'queued' as const,
    statuses: [{ status: 'queued' as const, set_at_utc: now }],
    status_updated_at: now,
    max_candidates: input.max_candidates,
    offer_ttl_s: input.offer_ttl_s,
    max_waves: input.max_waves,
    max_runsheets_per_driver: input.max_runsheets_per_driver,
    max_location_age_s: input.max_location_age_s,
  };
  // Watched by the requeue sweep (shared/workers/requeue.ts) until the job ends, in case its message is lost.
  const watch = { GSI3PK: activeJobsPartition(planning.org_id), GSI3SK: requeueAt(clock.nowMs()) } as Partial<Planning>;
  const started = await changePlanning(planning, input.version_rev, {
    job,
    last_executed_at_server_time: now,
    ...watch,
  });
  await queue().enqueue({ kind: 'planning', planning_id: id, job_id: job.id }, 0);
  return toPlanningView(started);
}

/** Runsheets paired at a time, and the store writes of one run in flight at most. */
const RUNSHEETS_AT_ONCE = 50;
const WRITES_IN_FLIGHT = 32;

export const JOB_LEASE_MS = 15 * 60 * 1000;
export const MAX_JOB_ATTEMPTS = MAX_ATTEMPTS;

/** The job's lease (shared/workers/lease.ts): `queued` → `processing`, on the planning's `job`, this job only. */
const leased = (planningId: string, jobId: string): LeasedRecord => ({
  name: 'planning job',
  key: planningKey(planningId),
  at: 'job.',
  status: 'current_status',
  queued: 'queued',
  running: 'processing',
  guard: { condition: 'job.id = :job', values: { ':job': jobId } },
});

/**
 * Takes the job for this worker: from `queued`, or from a `processing` job whose lease ran out (its worker died).
 * Undefined when another worker holds it or it has ended.
 */
function claimJob(planning: Planning, jobId: string, owner: string): Promise<Planning | undefined> {
  const job = planning.job;
  if (!job || job.id !== jobId) return Promise.resolve(undefined);
  const now = clock.nowIso();
  return claimLease<Planning>(leased(planning.id, jobId), job.current_status, owner, JOB_LEASE_MS, {
    entering: { set: { status_updated_at: now }, append: { statuses: [{ status: 'processing', set_at_utc: now }] } },
  });
}

export { pairIdOf };

/**
 * What an earlier run of this job decided: by runsheet index, the drivers (indexes, in the planning's order) its offer
 * group lists a pair of this job for. A run lists a runsheet's pairs on its group before it writes them, so a
 * runsheet the earlier run got to has them there, written or not. One strongly consistent Query of the plan's groups.
 */
async function earlierDecisions(
  planId: string,
  jobId: string,
  runsheets: { id: string }[],
  drivers: { id: string }[],
): Promise<Map<number, number[]>> {
  const groups = await queryPartitions<OfferListing & { SK: string }>(planPartitions(planId), {
    TableName: mainTableName(),
    ConsistentRead: true,
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :group)',
    ExpressionAttributeValues: { ':group': groupKey(planId, '').SK },
    ProjectionExpression: 'SK, job_id, offered, pair_ids',
  });
  const listed = new Map(groups.map((group) => [group.SK, new Set(groupPairIds(group, groupRunsheetIdOf(group.SK)))]));
  const decided = new Map<number, number[]>();
  runsheets.forEach((runsheet, r) => {
    const ids = listed.get(groupKey(planId, runsheet.id).SK);
    if (!ids) return;
    const chosen = drivers.flatMap((driver, d) => (ids.has(pairIdOf(jobId, runsheet.id, driver.id)) ? [d] : []));
    if (chosen.length > 0) decided.set(r, chosen);
  });
  return decided;
}

/**
 * The worker: one run of one planning job. Writes per pair: one record; the result and statuses once. A run that
 * dies is taken over when its lease lapses and rewrites nothing it wrote; after three runs the job fails.
 */
export async function runPlanningJob(message: QueuedMessage): Promise<{ pairs: number } | undefined> {
  const planning = await findPlanning(String(message['planning_id']));
  if (!planning) return undefined;
  const ended = planning.job;
  if (ended && ended.id === message['job_id'] && ['completed', 'failed'].includes(ended.current_status)) {
    // An earlier run ended the job but may not have announced it.
    if (await announcePending(planning)) await announce(planning, ended.current_status);
    return undefined;
  }
  const owner = message.message_id ?? randomUUID();
  const current = await claimJob(planning, String(message['job_id']), owner);
  if (!current) return undefined;
  const startTime = clock.nowIso();
  const job = current.job!;
  // The offer watch's due time once this run has touched it: touched again however the run ends (see watchOffers).
  let watchedUntil: string | undefined;
  try {
    const contents = await planningContents(planning.id);
    const { drivers } = contents;
    // A runsheet someone holds or the planner cancelled (an earlier job's) is not offered again.
    const { groupOf, claimOf } = await planningRecords(planning.id);
    const statusOf = (id: string) => runsheetStatus(groupOf.get(id), claimOf.get(id));
    const runsheets = contents.runsheets.filter((r) => !['assigned', 'cancelled'].includes(statusOf(r.id).status));
    const facts = await driverFacts(current, drivers);
    const names = new Map(facts.map((d) => [d.id, d.name]));
    // Wave 1 offers only eligible drivers (contract 4.7): on duty, a fresh location, below the limit, the service type.
    const parameters = parametersOf(current);
    const judged = runsheets.map(dispatchRunsheet);
    const nowMs = clock.nowMs();
    const never = new Set<string>();
    const allowed = (r: number, d: number) =>
      exclusionOf(judged[r]!, { ...facts[d]!, offered: never }, parameters, nowMs) === undefined;
    // Claimed from `queued`: no run of this job came before, so none of its pairs exists yet (a later run starts only
    // once this one's lease has lapsed, and the lease outlasts the function's timeout).
    const firstRun = planning.job?.current_status === 'queued';
    // Who is offered what is decided for the whole planning at once (shared/planning/pairing.ts). A rerun keeps what
    // an earlier run decided for the runsheets it got to: the drivers have moved since, and deciding again would
    // offer such a runsheet to more drivers than `max_candidates` (the earlier pairs stand) or to other ones.
    const decided = firstRun
      ? new Map<number, number[]>()
      : await earlierDecisions(planning.id, job.id, runsheets, drivers);
    const candidates = pairCandidates(
      judged.map((runsheet) => ({ id: runsheet.id, ...(runsheet.pickup ? { pickup: runsheet.pickup } : {}) })),
      facts.map((d) => ({ id: d.id, ...(d.location ? { location: d.location } : {}) })),
      job.max_candidates,
      allowed,
    ).map((ranked, r) => decided.get(r) ?? ranked);
    // The soonest expiry of this run's offers: the first chunk's (each chunk's offers run from their own broadcast).
    const startedMs = clock.nowMs();
    const expires = new Date(startedMs + job.offer_ttl_s * 1000).toISOString();
    let pairs = 0;
    // Each driver's offers of this run: one push and one `offer.new` delivery (one subscriber Query) per driver.
    const offers: DriverOffer[] = [];
    // The expiry sweep's one entry for every pair this run writes (before them and after them: see watchOffers). A
    // rerun touches it even with nothing left to pair: an earlier run's pairs may be open.
    if ((runsheets.length > 0 && drivers.length > 0) || (job.attempts ?? 1) > 1) {
      await watchOffers(planning.id, planning.org_id, expires);
      watchedUntil = expires;
    }
    // Runsheets a few at a time, their pairs written concurrently: the job's time is the store's round trips.
    for (let start = 0; start < runsheets.length; start += RUNSHEETS_AT_ONCE) {
      // A big planning takes a while to write: an offer's time to answer (`offer_ttl_s`) starts when its chunk is
      // broadcast, not when the run began, so no offer reaches its driver already expired.
      // The first chunk's are the run's own instant, so the offer watch is due exactly at its offers' expiry.
      const chunkMs = start === 0 ? startedMs : Math.max(startedMs, clock.nowMs());
      const now = new Date(chunkMs).toISOString();
      const chunkExpires = new Date(chunkMs + job.offer_ttl_s * 1000).toISOString();
      // Drivers win while a big planning is written: one who has won their last runsheet since the run read the
      // facts is not offered more (the accept closed the offers that existed then; these would wait out their ttl).
      const full =
        start === 0
          ? new Set<string>()
          : new Set(
              [...(await runsheetsWon(planning.id))].flatMap(([id, won]) =>
                won >= parameters.max_runsheets_per_driver ? [id] : [],
              ),
            );
      const chunk = runsheets.slice(start, start + RUNSHEETS_AT_ONCE).map((runsheet, i) => ({
        runsheet,
        drivers: candidates[start + i]!.flatMap((d) => (full.has(drivers[d]!.id) ? [] : [drivers[d]!])),
      }));
      const records = chunk.flatMap(({ runsheet, drivers: ranked }) =>
        ranked.map(
          (driver): PairRecord =>
            servicePair({
              id: pairIdOf(job.id, runsheet.id, driver.id),
              planning,
              runsheet,
              driver: { id: driver.id, name: names.get(driver.id) ?? '' },
              at: now,
              offerTtlS: job.offer_ttl_s,
              offer: { expires: chunkExpires, reason: null },
            }),
        ),
      );
      pairs += records.length;
      // A runsheet's offer group lists its pairs before they exist (a listed pair not written yet is skipped by the
      // accept's rival close), so no pair is ever open without its group.
      // Every runsheet gets its dispatch record, wave 1, even one nobody may be offered: the wave worker judges that
      // one at once (it becomes `unassigned`, with the reason).
      const groups: FirstWave[] = chunk.map(({ runsheet, drivers: ranked }) => ({
        runsheetId: runsheet.id,
        pairIds: ranked.map((driver) => pairIdOf(job.id, runsheet.id, driver.id)),
        driverIds: ranked.map((driver) => driver.id),
      }));
      const wave = { expires: chunkExpires, maxWaves: parameters.max_waves, jobId: job.id };
      let offered: ({ record: PairRecord; expiredTime: string } | undefined)[];
      if (firstRun) {
        // A runsheet an earlier job (or R3, X16) offered keeps those offers named on its group (their pairs by id).
        await putFirstOffers(planning.id, planning.org_id, groups, records, wave, groupOf);
        offered = records.map((record) => ({ record, expiredTime: chunkExpires }));
      } else {
        // A rerun lists the groups again (sets), must not overwrite a pair an earlier run wrote (a driver may have
        // answered it since), and offers one still open again: the earlier run may have died before its push and
        // event went out.
        // A group no run of this job reached (an earlier job's, R3's or X16's) is written anew, as the first run writes
        // it: every run of this job names itself on the groups it writes.
        const anew = (group: { runsheetId: string }) => {
          const before = groupOf.get(group.runsheetId);
          return before !== undefined && before.job_id !== job.id;
        };
        await putFirstGroups(planning.id, planning.org_id, groups.filter(anew), wave, groupOf);
        await mapLimited(
          groups.filter((group) => !anew(group)),
          WRITES_IN_FLIGHT,
          (group, i) => addFirstWave(planning.id, planning.org_id, group, wave, i === 0),
        );
        offered = await mapLimited(records, WRITES_IN_FLIGHT, async (record) => {
          if (await putNewPair(record)) return { record, expiredTime: chunkExpires };
          const stored = await readPair(planning.id, record.id);
          if (stored?.current_state !== 'broadcasted') return undefined;
          const expiredTime = stored.statuses.findLast((s) => s.action === 'broadcast')?.expired_time ?? chunkExpires;
          return { record, expiredTime };
        });
      }
      const told = offered.flatMap((offer) => (offer ? [offer] : []));
      offers.push(...told.map(driverOffer));
      // One delivery (one read of the channel's subscribers) for the chunk's events, in runsheet order.
      await publish(broadcastAnnouncements(planning.id, told, 1));
    }
    // Again after the last pair: a sweep that read the watch while the pairs were being written then leaves it be.
    if (watchedUntil) await watchOffers(planning.id, planning.org_id, watchedUntil);
    // Each driver hears of their own offers on `user.<id>` (contract 4.3), in one delivery however many they are, and
    // gets one push however many runsheets are offered to them.
    await publish(runOfferAnnouncements(planning, offers, DRIVER_APPLICATION()));
    await saveJobResult(current, {
      planning_job_id: job.id,
      total_pairs_counted: pairs,
      total_runsheets_counted: runsheets.length,
      total_drivers_counted: drivers.length,
      start_time: startTime,
      end_time: clock.nowIso(),
    }).catch((error: unknown) => {
      if (!isDomainError(error, 'conflict')) throw error;
    });
    await finishJob(
      () => moveJob(current, 'completed'),
      (done) => announce(done, 'completed'),
    );
    return { pairs };
  } catch (error) {
    logger.error('planning job run failed', { planning_id: planning.id, attempt: job.attempts, error: error as Error });
    // The pairs written so far stay watched even if no run comes after this one (a job failed for good).
    if (watchedUntil) {
      await watchOffers(planning.id, planning.org_id, watchedUntil).catch((watch: unknown) =>
        logger.warn('offer watch not touched after a failed run', { error: watch as Error }),
      );
    }
    const latest = await findPlanning(planning.id);
    // Ended but not announced: the queue's retry announces it.
    if (latest?.job?.id === job.id && latest.job.current_status !== 'processing' && (await announcePending(latest))) {
      throw error;
    }
    if (latest?.job?.id !== job.id || latest.job.current_status !== 'processing') return undefined;
    // Failed for good on its last attempt; else the queue's retry takes the job over (a dependency's fault uncounted).
    await failRun({ record: leased(planning.id, job.id), owner, attempts: job.attempts }, error, () =>
      finishJob(
        () => moveJob(latest, 'failed'),
        (done) => announce(done, 'failed'),
      ),
    );
    return undefined;
  }
}

/**
 * Tells the planning's channel and, when the job ends (completed, failed or cancelled), its partners, then marks the
 * move announced (a small item of its own: the profile is in two ALL indexes, and a flag on it would cost them a
 * rewrite each). An end carries what the dispatch has come to (`dispatchCounts`: its runsheets by status, its offers
 * by outcome), on both. A failure leaves the move unmarked for the queue's retry (or the request's) to announce
 * again: events are sent at least once, partner events with the same webhook-id.
 */
async function announce(planning: Planning, status: string) {
  const jobId = planning.job?.id;
  const ended = status === 'completed' || status === 'failed' || status === 'cancelled';
  const counts = ended ? await dispatchCounts(planning.id, planning.total_runsheets) : {};
  await publish([
    frame(`planning.${planning.id}`, 'planning_job.status', {
      key: `${jobId}:${status}`,
      // A move is announced only for a planning that has its job.
      data: { planning_job_id: jobId as string, status, ...counts },
    }),
    ...(ended
      ? [
          toPartners(
            planning.org_id,
            `planning_job.${status}`,
            { planning_id: planning.id, planning_job_id: jobId, status, ...counts },
            `${jobId}:${status}`,
          ),
        ]
      : []),
  ]);
  await markAnnounced(planning, status);
}

/** P13–P16: an external worker (or SysAdmin) moves the job; P16 (cancel) also for planning readers. */
export async function moveJobByRequest(
  caller: Caller,
  id: string,
  to: 'processing' | 'completed' | 'failed' | 'cancelled',
) {
  const planning = await visiblePlanning(caller, id);
  // The retry of a move whose announcement failed (it answered 503): the move stands; announce it now.
  if (planning.job?.current_status === to && to !== 'processing' && (await announcePending(planning))) {
    await announce(planning, to);
    return planning;
  }
  const moved = await moveJob(planning, to);
  if (to !== 'processing') await announce(moved, to);
  return moved;
}

registerLocalWorker('planning', async (message) => {
  await runPlanningJob(message);
});
