/**
 * The wave worker: dispatch until every runsheet has a driver, or a person knows why (contract 4.7).
 *
 * The wave worker (`sendDueWaves`, run by the offer sweep: every two seconds locally, every minute in the cloud)
 * looks at the runsheets whose group is due in its planning's wave list (GSI3 `WAVES#<plan>#<n>`, found through the
 * registry of plannings with one: shared/planning/wave-plans.ts): every close of an offer makes it due
 * now, and every wave makes it due a second after its offers expire. It judges from the pair records, read
 * consistently, never from the group's copy: offers past their expiry it closes itself (`expired`, the event the
 * expiry sweep would record; a later wave's pairs are closed only here); a runsheet with an open offer waits;
 * one won is left; one whose offers all closed gets its next wave (up to `waves_allowed`, to the nearest eligible
 * drivers never offered it) or becomes `unassigned` with its reason. A wave is claimed on the group by a write
 * conditional on the wave number and the group's generation (`gen`, moved by every mark), so however many workers,
 * retries or faults, each wave is sent once; its drivers are written into the claim, so a worker that dies halfway is
 * followed by one that sends the same pairs (their ids follow from job, wave, runsheet and driver) and events (same
 * ids) once the claim's lease has lapsed and the runsheet is due (the claim makes it due when the wave's offers expire,
 * a close sooner).
 *
 * What a wave may ask is read by `WaveDrivers` (shared/planning/wave-drivers.ts); the records it moves are
 * shared/planning/dispatch-records.ts's.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { mapLimited } from '#shared/concurrency';
import { db, getAll, isConditionalFailure, mainTableName } from '#shared/db/client';
import { logger } from '#shared/log';
import { publish } from '#shared/planning/announcements';
import { closeOffer } from '#shared/planning/broadcasts';
import type { DispatchGroup } from '#shared/planning/dispatch-records';
import {
  eligibleDrivers,
  type OfferCounts,
  type UnassignedReason,
  unassignedReason,
} from '#shared/planning/eligibility';
import { EXPIRY_GRACE_MS } from '#shared/planning/first-offers';
import { assignKey, groupKey, groupRunsheetIdOf, pairKey, runsheetKey } from '#shared/planning/keys';
import { isOpenPair } from '#shared/planning/lifecycle';
import { waveOfferAnnouncements } from '#shared/planning/offer-announcements';
import {
  groupPairIds,
  offeredDrivers,
  offeredEntry,
  openOffers,
  waveDrivers,
  wavePairId,
} from '#shared/planning/offer-groups';
import {
  type PairRecord,
  type PairState,
  pairFromItem,
  putNewPair,
  readPair,
  type StatusEntry,
  servicePair,
} from '#shared/planning/pair-records';
import { findPlanning, type Planning } from '#shared/planning/planning-records';
import { unassignAnnouncements } from '#shared/planning/runsheet-moves';
import { JOB_DEFAULTS } from '#shared/planning/schemas';
import { parametersOf, runsheetsWonBy, WaveDrivers, withOffered } from '#shared/planning/wave-drivers';
import { duePage, registeredPlannings, waveDueKey } from '#shared/planning/wave-plans';

export const DRIVER_APPLICATION = () => process.env['DRIVER_APPLICATION_KEY'] ?? 'driver-app';

/** A wave's claim: how long the worker that claimed it has to send it before another may finish it. */
const WAVE_LEASE_MS = 60_000;

/** Runsheets of one planning judged at once. */
const JUDGED_AT_ONCE = 8;
/** Runsheets the worker reads from its index at a time. */
const DUE_PER_PAGE = 100;
/** Plannings whose due runsheets a sweep reads and judges at once. */
const PLANS_AT_ONCE = 2;
/**
 * How long one sweep goes on taking the next page of due runsheets: a day whose wave 1 expires at once (500 runsheets)
 * is worked through in this sweep, not one page a sweep; what is left is the next sweep's (two seconds locally).
 */
const SWEEP_BUDGET_MS = 10_000;

/**
 * One sweep: the plannings with a wave list (every organisation's registry; `orgs`: the run's organisations, read
 * when not given), then, a page of each planning's due runsheets at a time,
 * those runsheets judged, a planning's together (its facts read once a sweep), until none is due or the sweep's budget
 * is spent.
 */
export async function sendDueWaves(orgs?: readonly string[]): Promise<{ waves: number; unassigned: number }> {
  const started = clock.nowMs();
  const tally = { waves: 0, unassigned: 0 };
  const judges = new Map<string, WaveJudge>();
  let failed: unknown;
  // Entries left due by this sweep (a failure, a wave still leased) are not judged twice in it.
  const seen = new Set<string>();
  let plans = await registeredPlannings(started, orgs);
  while (plans.length > 0) {
    const more: string[] = [];
    await mapLimited(plans, PLANS_AT_ONCE, async (planId) => {
      const out = await duePage(planId, clock.nowIso(), DUE_PER_PAGE, clock.nowMs());
      const due = out.items
        .filter((item) => !seen.has(String(item['GSI3SK'])))
        .map((item) => ({ runsheetId: groupRunsheetIdOf(item['SK']), dueKey: String(item['GSI3SK']) }));
      for (const { dueKey } of due) seen.add(dueKey);
      if (out.full && due.length > 0) more.push(planId);
      const judge = judges.get(planId) ?? new WaveJudge(planId);
      judges.set(planId, judge);
      // A few runsheets at a time: each is judged on its own records (its claim on its group decides its wave).
      await mapLimited(due, JUDGED_AT_ONCE, async ({ runsheetId, dueKey }) => {
        // One runsheet's failure leaves its entry due (the next sweep tries again); the others go on.
        const outcome = await judge.judge(runsheetId, { dueKey }).catch((error: unknown) => {
          logger.warn('wave judgement failed', { planning_id: planId, runsheet_id: runsheetId, error: error as Error });
          failed ??= error;
          return undefined;
        });
        if (outcome === 'wave') tally.waves++;
        if (outcome === 'unassigned') tally.unassigned++;
      });
    });
    if (clock.nowMs() - started >= SWEEP_BUDGET_MS) break;
    plans = more;
  }
  if (failed) throw failed;
  return tally;
}

type Outcome = 'wave' | 'unassigned' | 'waiting' | 'done' | 'skipped';

/**
 * Judges the runsheets of one planning; reads the planning and its drivers' facts once, when first needed. X17's
 * (`oneRunsheet`) reads only the drivers near its runsheet when they suffice (`nearest`).
 */
export class WaveJudge extends WaveDrivers {
  /**
   * Judges one runsheet: `dueKey` is the sweep entry read (the group is left alone if it moved since); `force` is
   * X17's (judge now, whatever the entry).
   */
  async judge(
    runsheetId: string,
    how: { dueKey?: string; force?: boolean; expiredClosed?: boolean },
  ): Promise<Outcome> {
    const planId = this.planId;
    const group = (
      await db().send(
        new GetCommand({ TableName: mainTableName(), Key: groupKey(planId, runsheetId), ConsistentRead: true }),
      )
    ).Item as DispatchGroup | undefined;
    if (!group?.wave) return 'skipped';
    if (!how.force && group.GSI3SK !== how.dueKey) return 'skipped';
    const gen = group.gen ?? 0;
    const nowMs = clock.nowMs();
    if (group.pending) {
      if (group.pending.lease_until > nowMs) {
        await this.reschedule(runsheetId, new Date(group.pending.lease_until).toISOString(), gen);
        return 'waiting';
      }
      // The worker that claimed this wave died before it was all sent: send the same pairs and events again. Its claim
      // made the runsheet due when the offers expire (issue 45: one write for the claim and its end), so unless a
      // close marked it due sooner it is found then: the pairs not yet written get a fresh expiry (and lease).
      const stale = Date.parse(group.pending.expires) <= nowMs;
      const resent = stale ? await this.renewClaim(group, runsheetId, nowMs) : group;
      if (!resent) return 'skipped';
      await this.sendWave(resent, runsheetId);
      return 'wave';
    }
    const claim = (
      await db().send(
        new GetCommand({ TableName: mainTableName(), Key: assignKey(planId, runsheetId), ConsistentRead: true }),
      )
    ).Item;
    if (group.cancelled || claim || !(await findPlanning(planId))) {
      await this.settle(runsheetId, gen, { open: {} });
      return 'done';
    }
    const pairs = (
      await getAll<{ id: string; current_state: PairState; statuses: unknown }>(
        mainTableName(),
        groupPairIds(group, runsheetId).map((id) => pairKey(planId, id)),
        { ProjectionExpression: 'id, current_state, statuses', ConsistentRead: true },
      )
    ).map(pairFromItem);
    if (pairs.some((p) => p.current_state === 'accepted')) {
      // Won a moment ago (the claim was read before the accept): the winner's closes follow.
      await this.settle(runsheetId, gen, { open: {} });
      return 'done';
    }
    const open = Object.fromEntries(
      pairs.flatMap((p) => {
        if (!isOpenPair(p.current_state)) return [];
        const expiry = p.statuses.findLast((s) => s.action === 'broadcast')?.expired_time ?? clock.nowIso();
        return [[p.id, expiry]];
      }),
    );
    const nowIso = new Date(nowMs).toISOString();
    const expired = pairs.filter((p) => p.current_state === 'broadcasted' && open[p.id]! < nowIso);
    if (expired.length > 0) {
      // Its offers expired: closed here (as the expiry sweep closes them, the same event), so that the next wave goes
      // out in this same look instead of after another sweep. Not marked due by the closes (judged now); an offer
      // answered meanwhile (a 409 that records nothing) or contended sends the runsheet round again, read afresh.
      const closed = await mapLimited(expired, JUDGED_AT_ONCE, (p) =>
        closeOffer(planId, p.id, 'expired', { at: open[p.id]!, judgedNow: true, contended: 'skip' }),
      );
      if (closed.some((record) => !record) && !how.expiredClosed) {
        return this.judge(runsheetId, { force: true, expiredClosed: true });
      }
      for (const record of closed) {
        if (!record) continue;
        const at = pairs.findIndex((p) => p.id === record.id);
        pairs[at] = { id: record.id, current_state: record.current_state, statuses: record.statuses };
        delete open[record.id];
      }
    }
    const reoffer = group.reoffer && group.reoffer.wave > group.wave;
    if (Object.keys(open).length > 0 && !reoffer) {
      const soonest = Object.values(open).sort()[0]!;
      const due = new Date(Math.max(Date.parse(soonest) + EXPIRY_GRACE_MS, nowMs + 1000)).toISOString();
      await this.settle(runsheetId, gen, { open, due });
      return 'waiting';
    }
    const offeredTo = offeredDrivers(group);
    const near = this.oneRunsheet
      ? await this.nearest(runsheetId, offeredTo, group.reoffer?.max_candidates, nowMs)
      : undefined;
    const { planning, runsheets } = near ?? (await this.load());
    const facts = near?.facts ?? (await this.currentFacts());
    const runsheet = runsheets.get(runsheetId);
    if (!runsheet) {
      // Removed from the planning (P6): nothing more to send.
      await this.settle(runsheetId, gen, { open });
      return 'done';
    }
    const parameters = parametersOf(planning);
    const judged = eligibleDrivers(runsheet, withOffered(facts, offeredTo, runsheetId), parameters, nowMs);
    const allowed = group.waves_allowed ?? parameters.max_waves;
    const maxCandidates = group.reoffer?.max_candidates ?? planning.job?.max_candidates ?? JOB_DEFAULTS.max_candidates;
    const openIds = Object.keys(open);
    if (reoffer && judged.eligible.length === 0 && openIds.length > 0) {
      // X17 on an offered runsheet with nobody left to ask: its open offers stand (no unassignment under them).
      const soonest = Object.values(open).sort()[0]!;
      const due = new Date(Math.max(Date.parse(soonest) + EXPIRY_GRACE_MS, nowMs + 1000)).toISOString();
      await this.settle(runsheetId, gen, { open, due });
      return 'waiting';
    }
    if ((group.wave >= allowed && !reoffer) || judged.eligible.length === 0) {
      const reason = unassignedReason({
        waves: group.wave,
        offers: outcomes(pairs),
        excluded: judged.excluded,
        notAsked: judged.eligible.length,
      });
      await this.unassign(group, runsheetId, gen, reason);
      return 'unassigned';
    }
    const chosen = judged.eligible.slice(0, maxCandidates).map((e) => e.driver.id);
    const ttl = group.reoffer?.offer_ttl_s ?? planning.job?.offer_ttl_s ?? JOB_DEFAULTS.offer_ttl_s;
    const wave = group.wave + 1;
    const jobId = planning.job?.id ?? planId;
    // The wave's pairs are named by their drivers' entries (`<wave>#<driver>`) and the group's job; a wave sent under
    // another job than the group's lists them by id (offer-groups.ts), its drivers and job in the claim.
    const named = group.job_id === jobId;
    const pending = {
      wave,
      expires: new Date(nowMs + ttl * 1000).toISOString(),
      lease_until: nowMs + WAVE_LEASE_MS,
      ttl_s: ttl,
      ...(named ? {} : { drivers: chosen, job_id: jobId }),
    };
    const entries = chosen.map((driverId) => offeredEntry(named ? wave : 0, driverId));
    const pairIds = chosen.map((driverId) => wavePairId(jobId, wave, runsheetId, driverId));
    // Due when the offers expire, as the claim's end would leave it (issue 45: the claim carries it from the start, so
    // the end writes the item alone; a worker that dies mid-wave is followed when the offers expire, or sooner if a
    // close marks the runsheet due, instead of when the lease lapses).
    const claimDue = waveDueKey(
      new Date(Date.parse(pending.expires) + EXPIRY_GRACE_MS).toISOString(),
      planId,
      runsheetId,
    );
    try {
      // The claim: this wave, once. Its pairs are listed and their drivers counted as offered before any is written.
      await db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: groupKey(planId, runsheetId),
          UpdateExpression: `SET wave = :wave, pending = :pending, #open = :open, GSI3SK = :due ADD gen :one, offered :drivers${named ? '' : ', pair_ids :pairs'} REMOVE unassigned, reoffer`,
          ConditionExpression: `wave = :read AND (attribute_not_exists(gen) OR gen = :gen)${named ? ' AND job_id = :job' : ''}`,
          ExpressionAttributeNames: { '#open': 'open' },
          ExpressionAttributeValues: {
            ':wave': wave,
            ':read': group.wave,
            ':gen': gen,
            ':pending': pending,
            // X17's wave from `offered`: the offers still open stay open beside the new ones.
            ':open': openOffers({ ...open, ...Object.fromEntries(pairIds.map((id) => [id, pending.expires])) }),
            ':due': claimDue,
            ':one': 1,
            ':drivers': new Set(entries),
            ...(named ? { ':job': jobId } : { ':pairs': new Set(pairIds) }),
          },
        }),
      );
    } catch (error) {
      if (isConditionalFailure(error)) return 'skipped'; // another worker took it, or a close came: judged again
      throw error;
    }
    // Sent in the order chosen, nearest first (the claim stores its drivers as a set).
    const sent = { ...pending, drivers: chosen, job_id: jobId };
    await this.sendWave({ ...group, wave, pending: sent, gen: gen + 1, GSI3SK: claimDue }, runsheetId).catch(
      async (error: unknown) => {
        // A failure this worker lives to see: the runsheet is due again when the lease lapses, as before issue 45.
        await this.reschedule(runsheetId, new Date(pending.lease_until).toISOString(), gen + 1);
        throw error;
      },
    );
    return 'wave';
  }

  /**
   * A dead worker's wave found after its offers expired: the same wave (drivers, pairs) with a fresh expiry and lease,
   * claimed again on the group's generation. Undefined when another worker or a mark came first.
   */
  private async renewClaim(group: DispatchGroup, runsheetId: string, nowMs: number) {
    const pending = {
      ...group.pending!,
      expires: new Date(nowMs + group.pending!.ttl_s * 1000).toISOString(),
      lease_until: nowMs + WAVE_LEASE_MS,
    };
    const due = waveDueKey(
      new Date(Date.parse(pending.expires) + EXPIRY_GRACE_MS).toISOString(),
      this.planId,
      runsheetId,
    );
    try {
      await db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: groupKey(this.planId, runsheetId),
          UpdateExpression: 'SET pending = :pending, GSI3SK = :due ADD gen :one',
          ConditionExpression: 'pending.wave = :wave AND gen = :gen',
          ExpressionAttributeValues: {
            ':pending': pending,
            ':due': due,
            ':one': 1,
            ':wave': pending.wave,
            ':gen': group.gen ?? 0,
          },
        }),
      );
    } catch (error) {
      if (isConditionalFailure(error)) return undefined;
      throw error;
    }
    return { ...group, pending, gen: (group.gen ?? 0) + 1, GSI3SK: due };
  }

  /** Writes the claimed wave's pairs (already broadcast), tells the drivers and the planning, and ends the claim. */
  private async sendWave(group: DispatchGroup, runsheetId: string) {
    const planId = this.planId;
    const pending = group.pending!;
    const { planning, facts, names: runsheetNames } = this.near ?? (await this.load());
    const runsheetName = runsheetNames.has(runsheetId)
      ? runsheetNames.get(runsheetId)
      : ((
          await db().send(
            new GetCommand({
              TableName: mainTableName(),
              Key: runsheetKey(planId, runsheetId),
              ProjectionExpression: '#n',
              ExpressionAttributeNames: { '#n': 'name' },
            }),
          )
        ).Item?.['name'] as string | undefined);
    const names = new Map(facts.map((f) => [f.id, f.name]));
    const now = clock.nowIso();
    // A wave found half sent: its drivers are its entries in `offered` (unless the claim lists them).
    const jobId = pending.job_id ?? group.job_id!;
    const records = (pending.drivers ?? waveDrivers(group, pending.wave)).map((driverId) =>
      servicePair({
        id: wavePairId(jobId, pending.wave, runsheetId, driverId),
        planning,
        runsheet: { id: runsheetId, name: runsheetName },
        driver: { id: driverId, name: names.get(driverId) ?? '' },
        at: now,
        offerTtlS: pending.ttl_s,
        offer: { expires: pending.expires, reason: `wave ${pending.wave}` },
        // Closed at its expiry by this worker (the runsheet is due then), not the plan's offer watch.
        waveJudged: true,
      }),
    );
    // A retry must not overwrite a pair a driver has answered since: written only if new; an open one is told again.
    const offered = await mapLimited(records, 8, async (record) => {
      if (await putNewPair(record)) return { record, expiredTime: pending.expires };
      const stored = await readPair(planId, record.id, true);
      if (stored?.current_state !== 'broadcasted') return undefined;
      return {
        record,
        expiredTime: stored.statuses.findLast((s) => s.action === 'broadcast')?.expired_time ?? pending.expires,
      };
    });
    const sent = offered.flatMap((o) => (o ? [o] : []));
    await publish(
      waveOfferAnnouncements(
        planning,
        { id: runsheetId, name: runsheetName },
        pending.wave,
        sent,
        DRIVER_APPLICATION(),
      ),
    );
    // The claim ends; the runsheet is looked at again shortly after its offers expire, or at once if anything asked
    // for a look while the wave was being sent (a driver declined a pair already written: `gen` moved).
    // The claim made it due at the expiry already (issue 45): then the end writes the item alone, no index entry.
    const due = new Date(Date.parse(pending.expires) + EXPIRY_GRACE_MS).toISOString();
    const endClaim = (at: string, sameGen: boolean, moves = true) =>
      db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: groupKey(planId, runsheetId),
          UpdateExpression: moves ? 'REMOVE pending SET GSI3SK = :due' : 'REMOVE pending',
          // Not moving: only while the entry is still where the claim put it (a judgement meanwhile may have moved it
          // to the lease without moving `gen`).
          ConditionExpression: `${sameGen ? 'pending.wave = :wave AND gen = :gen' : 'pending.wave = :wave'}${moves ? '' : ' AND GSI3SK = :due'}`,
          ExpressionAttributeValues: {
            ':wave': pending.wave,
            ':due': waveDueKey(at, planId, runsheetId),
            ...(sameGen ? { ':gen': group.gen ?? 0 } : {}),
          },
          // Whether X18 cancelled the runsheet while the wave was being sent (read with the write, at no cost).
          ReturnValues: 'ALL_NEW',
        }),
      );
    const inPlace = group.GSI3SK === waveDueKey(due, planId, runsheetId);
    const ended = await endClaim(due, true, !inPlace)
      .catch((error: unknown) => {
        if (!isConditionalFailure(error) || !inPlace) throw error;
        return endClaim(due, true);
      })
      .catch((error: unknown) => {
        if (!isConditionalFailure(error)) throw error;
        return endClaim(clock.nowIso(), false);
      })
      .catch((error: unknown) => {
        if (!isConditionalFailure(error)) throw error;
      });
    // A close that read the runsheet's pairs before these were written did not close them: they are closed as it
    // would have. X18 shows in the claim's end; an accept or X16 that won meanwhile in its claim, read after the
    // writes (so a claim made later reads the pairs itself).
    const late = async (reason: string, winner?: unknown) => {
      for (const { record } of sent) {
        if (record.id === winner) continue;
        await closeOffer(planId, record.id, reason, { contended: 'throw' });
      }
    };
    if (ended?.Attributes?.['cancelled']) return late('runsheet_cancelled');
    if (sent.length > 0) {
      const claim = (
        await db().send(
          new GetCommand({
            TableName: mainTableName(),
            Key: assignKey(planId, runsheetId),
            ConsistentRead: true,
            ProjectionExpression: 'pair_id',
          }),
        )
      ).Item;
      if (claim) return late('assigned_to_other_driver', claim['pair_id']);
    }
    await this.closeAtCapacity(
      planning,
      sent.map(({ record }) => record),
    );
  }

  /**
   * The facts were read when the sweep began: a driver who won their last runsheet of the planning since then was
   * offered this one after their accept closed their open offers. Their new offer is closed now, as that accept would
   * have (`driver_at_capacity`), so the runsheet moves on at once instead of when the offer expires. After the claim
   * ends: the close marks the runsheet due, and ending the claim would move that mark to the expiry.
   */
  private async closeAtCapacity(planning: Planning, records: PairRecord[]) {
    if (records.length === 0) return;
    const limit = parametersOf(planning).max_runsheets_per_driver;
    const wins = await runsheetsWonBy(
      this.planId,
      records.map((record) => record.pair.driver.id),
    );
    for (const record of records.filter((r) => (wins.get(r.pair.driver.id) ?? 0) >= limit)) {
      // Answered or closed meanwhile: nothing left to close.
      await closeOffer(this.planId, record.id, 'driver_at_capacity', { contended: 'skip' });
    }
  }

  /** Records the reason, tells the planning and its partners, then takes the runsheet out of the sweep. */
  private async unassign(group: DispatchGroup, runsheetId: string, gen: number, reason: UnassignedReason) {
    const planId = this.planId;
    const { planning } = this.near ?? (await this.load());
    const retry = waveDueKey(new Date(clock.nowMs() + 30_000).toISOString(), planId, runsheetId);
    try {
      await db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: groupKey(planId, runsheetId),
          UpdateExpression: 'SET unassigned = :reason, #open = :none, GSI3SK = :retry ADD gen :one REMOVE reoffer',
          ConditionExpression: 'wave = :wave AND (attribute_not_exists(gen) OR gen = :gen)',
          ExpressionAttributeNames: { '#open': 'open' },
          ExpressionAttributeValues: {
            ':reason': reason,
            ':none': openOffers({}),
            ':retry': retry,
            ':one': 1,
            ':wave': group.wave,
            ':gen': gen,
          },
        }),
      );
    } catch (error) {
      if (isConditionalFailure(error)) return;
      throw error;
    }
    await publish(unassignAnnouncements({ planId, orgId: planning.org_id, runsheetId, wave: group.wave, gen }, reason));
    await this.settle(runsheetId, gen + 1, {});
  }

  /** Takes the runsheet out of the sweep (or moves it to `due`), repairing its open offers, unless it moved since. */
  private async settle(runsheetId: string, gen: number, change: { open?: Record<string, string>; due?: string }) {
    await db()
      .send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: groupKey(this.planId, runsheetId),
          UpdateExpression: `${change.due ? 'SET GSI3SK = :due' : 'REMOVE GSI3PK, GSI3SK'}${change.open ? `${change.due ? ',' : ' SET'} #open = :open` : ''}`,
          ConditionExpression: 'attribute_not_exists(gen) OR gen = :gen',
          ...(change.open ? { ExpressionAttributeNames: { '#open': 'open' } } : {}),
          ExpressionAttributeValues: {
            ':gen': gen,
            ...(change.due ? { ':due': waveDueKey(change.due, this.planId, runsheetId) } : {}),
            ...(change.open ? { ':open': openOffers(change.open) } : {}),
          },
        }),
      )
      .catch((error: unknown) => {
        if (!isConditionalFailure(error)) throw error;
      });
  }

  private async reschedule(runsheetId: string, due: string, gen: number) {
    await this.settle(runsheetId, gen, { due });
  }
}

/** How the runsheet's offers ended (an offer per driver asked): declined, let expire, closed by the system. */
function outcomes(pairs: { current_state: PairState; statuses: StatusEntry[] }[]): OfferCounts {
  const counts: OfferCounts = { rejected: 0, expired: 0, closed: 0 };
  for (const pair of pairs) {
    const last = pair.statuses.at(-1);
    if (pair.current_state === 'rejected' && last?.action === 'rejected') counts.rejected++;
    else if (pair.current_state === 'rejected' && last?.reason === 'expired') counts.expired++;
    else if (pair.current_state === 'rejected' || pair.current_state === 'withdrawn') counts.closed++;
  }
  return counts;
}
