/**
 * The dispatcher's moves on one runsheet (contract 4.7): X16 gives it to a driver (`assignRunsheet`), X17 offers it
 * again now (`reofferRunsheet`: a wave sent by the wave worker's machinery, shared/planning/waves.ts) and X18 takes it
 * out of dispatch (`cancelRunsheet`). Each answers with the runsheet as X14 lists it, read consistently after the
 * move. The records they move: shared/planning/dispatch-records.ts. Each is a shell: it reads, asks
 * shared/planning/runsheet-moves.ts what the move is (its legality, its writes as data, its refusal, what it tells),
 * writes (shared/planning/writes.ts `writeAll`) and hands what it tells to shared/planning/announcements.ts `publish`;
 * the pair moves it causes go through broadcasts.ts (the assignment `recordEvent`, the closes `closeOffer`).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { userKey } from '#shared/accounts/users';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { cancelledIndexes, db, getAll, isConditionalFailure, mainTableName } from '#shared/db/client';
import { conflict, invalidAt, notFound } from '#shared/errors';
import { newUuid } from '#shared/ids';
import { releaseTasks } from '#shared/imports/tasks';
import { logger } from '#shared/log';
import { publish } from '#shared/planning/announcements';
import { closeOffer, recordEvent } from '#shared/planning/broadcasts';
import { type Assignment, type DispatchGroup, dispatchRecords } from '#shared/planning/dispatch-records';
import { assignKey, groupKey, pairKey, planningDriverKey, runsheetKey } from '#shared/planning/keys';
import { isOpenPair } from '#shared/planning/lifecycle';
import { groupPairIds } from '#shared/planning/offer-groups';
import { planningRunsheets } from '#shared/planning/offered-runsheets';
import { type PairState, putNewPair, servicePair } from '#shared/planning/pair-records';
import { visiblePlanning } from '#shared/planning/planning-records';
import {
  cancelAnnouncements,
  cancelLost,
  decideCancel,
  judgeRunsheet,
  listNewPair,
  pairToAssign,
  releaseClaim,
  reofferWrite,
} from '#shared/planning/runsheet-moves';
import { JOB_DEFAULTS } from '#shared/planning/schemas';
import { WaveJudge } from '#shared/planning/waves';
import { writeAll } from '#shared/planning/writes';

/** A runsheet as X16–X18 answer it (X14's entry), read consistently after the action. */
async function runsheetSummary(planId: string, runsheetId: string) {
  const item = (
    await db().send(
      new GetCommand({ TableName: mainTableName(), Key: runsheetKey(planId, runsheetId), ConsistentRead: true }),
    )
  ).Item;
  if (!item) throw notFound('runsheet');
  const statusOf = await dispatchRecords(planId, [runsheetId], true);
  return {
    id: String(item['id']),
    ...(item['name'] !== undefined ? { name: item['name'] as string } : {}),
    ...(item['service_type'] !== undefined ? { service_type: item['service_type'] as string } : {}),
    tasks_total: ((item['tasks'] as unknown[] | undefined) ?? []).length,
    ...statusOf(runsheetId),
  };
}

async function readGroup(planId: string, runsheetId: string) {
  const out = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: groupKey(planId, runsheetId), ConsistentRead: true }),
  );
  return out.Item as DispatchGroup | undefined;
}

async function readClaim(planId: string, runsheetId: string) {
  const out = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: assignKey(planId, runsheetId), ConsistentRead: true }),
  );
  return out.Item as Assignment | undefined;
}

/**
 * X16: the dispatcher gives the runsheet to a driver of the planning. The driver's open offer of it is marked
 * `assigned`; without one, a pair is written for the driver and assigned. Either way the claim and the driver's
 * count are written as an accept writes them (so a simultaneous accept and assignment cannot both win), the other
 * open offers are closed (`assigned_to_other_driver`) and the driver is told (`runsheet.assigned`). The driver's duty
 * and location are the dispatcher's to judge; the runsheet limit holds (409 `driver_at_capacity`).
 */
export async function assignRunsheet(caller: Caller, planId: string, runsheetId: string, driverId: string) {
  const planning = await visiblePlanning(caller, planId);
  const current = await runsheetSummary(planId, runsheetId);
  const member = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: planningDriverKey(planId, driverId) }),
  );
  if (!member.Item) throw invalidAt('driver_id', 'is not a driver of this planning (add them with P7 first)');
  // The same assignment again (a retry) answers as the first did.
  const judged = judgeRunsheet('assign', current, driverId);
  if (judged.kind === 'refused') throw judged.error;
  if (judged.kind === 'again') return current;
  const group = await readGroup(planId, runsheetId);
  const pairs = await getAll<{ id: string; current_state: PairState; pair: { driver: { id: string } } }>(
    mainTableName(),
    groupPairIds(group, runsheetId).map((id) => pairKey(planId, id)),
    { ProjectionExpression: 'id, current_state, pair', ConsistentRead: true },
  );
  let pair = pairToAssign(pairs, driverId);
  if (!pair) {
    const user = (
      await getAll<{ name?: string }>(mainTableName(), [userKey(driverId)], {
        ProjectionExpression: '#n',
        ExpressionAttributeNames: { '#n': 'name' },
      })
    )[0];
    const now = clock.nowIso();
    const id = newUuid();
    // Closes of it (a withdrawal) reach the wave worker, as the job's pairs' do (`plan_swept`).
    const record = servicePair({
      id,
      planning,
      runsheet: { id: runsheetId, name: current.name },
      driver: { id: driverId, name: String(member.Item['name'] ?? user?.name ?? '') },
      at: now,
      offerTtlS: planning.job?.offer_ttl_s ?? JOB_DEFAULTS.offer_ttl_s,
    });
    // Its pair is listed by id (a new one each assignment): the driver's entry names no wave.
    await writeAll([listNewPair(planId, runsheetId, id, driverId)]);
    await putNewPair(record);
    pair = { id, current_state: 'created', pair: { driver: { id: driverId } } };
  }
  await recordEvent(planId, pair.id, 'assigned', clock.nowIso(), { reason: 'assigned_by_dispatcher' });
  return runsheetSummary(planId, runsheetId);
}

/**
 * X17: one more wave now, from `unassigned` or `offered` (open offers stay open), past `max_waves` if need be, with
 * the call's `max_candidates` and `offer_ttl_s` if given. Sent by the wave worker's own machinery, here and now; if
 * that fails, the sweep sends it (the runsheet is due at once). Issue 45: its reads do not grow with the planning: the
 * wave's drivers are chosen from those near the runsheet (`WaveJudge.nearest`), or from all of a planning of at most
 * EVERY_DRIVER_MAX drivers, where that is the cheaper read; only a runsheet nobody near can take (its unassigned reason
 * counts all the planning's drivers) or without coordinates reads the whole planning.
 */
export async function reofferRunsheet(
  caller: Caller,
  planId: string,
  runsheetId: string,
  settings: { max_candidates?: number | undefined; offer_ttl_s?: number | undefined },
) {
  const { org_id: orgId } = await visiblePlanning(caller, planId);
  for (let round = 0; round < 5; round++) {
    const current = await runsheetSummary(planId, runsheetId);
    const judged = judgeRunsheet('reoffer', current);
    if (judged.kind === 'refused') throw judged.error;
    const group = (await readGroup(planId, runsheetId))!;
    try {
      await writeAll([reofferWrite({ planId, orgId, runsheetId, now: clock.nowIso() }, group, settings)]);
    } catch (error) {
      if (isConditionalFailure(error)) continue; // a close or a wave came between: judge again
      throw error;
    }
    await new WaveJudge(planId, true).judge(runsheetId, { force: true }).catch((error: unknown) => {
      // The wave is asked for and due: the sweep sends it.
      logger.warn('re-offer left to the sweep', {
        planning_id: planId,
        runsheet_id: runsheetId,
        error: error as Error,
      });
    });
    return runsheetSummary(planId, runsheetId);
  }
  throw conflict('the runsheet kept changing; retry');
}

/**
 * X18's release: the cancelled runsheet's imported tasks are in no runsheet again (X10 `planned=false`, plannable by
 * P5, X23, X30), each on condition that it is still this runsheet's (a task another runsheet took since stays there).
 * The runsheet keeps `task_ids` and its tasks as history.
 */
async function releaseCancelledTasks(orgId: string, planId: string, runsheetId: string) {
  const taskIds = (await planningRunsheets(planId, [runsheetId])).get(runsheetId)?.task_ids ?? [];
  await releaseTasks(orgId, planId, runsheetId, taskIds);
}

/**
 * X18: the planner takes the runsheet out of dispatch. Its open offers are closed (`runsheet_cancelled`, each driver
 * told), a driver who held it is told (`runsheet.cancelled` on `user.<id>`) and gets their place back, and its
 * imported tasks are released. A second cancel answers as the first.
 */
export async function cancelRunsheet(caller: Caller, planId: string, runsheetId: string, reason: string) {
  const planning = await visiblePlanning(caller, planId);
  const current = await runsheetSummary(planId, runsheetId);
  const ask = { planId, runsheetId, reason, by: caller.id, at: clock.nowIso() };
  const decision = decideCancel(current, ask);
  if (decision.kind === 'refused') throw decision.error;
  if (decision.kind === 'again') {
    // A cancel that died after its mark left its tasks marked: the repeat frees them.
    await releaseCancelledTasks(planning.org_id, planId, runsheetId);
    return current;
  }
  try {
    await writeAll(decision.writes);
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    const refused = cancelLost(current, cancelledIndexes(error));
    if (refused) throw refused;
  }
  await releaseCancelledTasks(planning.org_id, planId, runsheetId);
  const claim = await readClaim(planId, runsheetId);
  if (claim) {
    const release = releaseClaim(ask, claim);
    await writeAll([release.count]).catch((error: unknown) => {
      if (!isConditionalFailure(error)) throw error;
    });
    await writeAll([release.claim]);
    await publish(release.told);
  }
  const group = await readGroup(planId, runsheetId);
  const pairs = await getAll<{ id: string; current_state: PairState }>(
    mainTableName(),
    groupPairIds(group, runsheetId).map((id) => pairKey(planId, id)),
    { ProjectionExpression: 'id, current_state', ConsistentRead: true },
  );
  for (const pair of pairs) {
    if (!isOpenPair(pair.current_state)) continue;
    await closeOffer(planId, pair.id, 'runsheet_cancelled', { contended: 'skip' });
  }
  await publish(cancelAnnouncements(ask, planning.org_id));
  return runsheetSummary(planId, runsheetId);
}
