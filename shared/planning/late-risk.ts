/**
 * Stops at risk (contract 4.11, issue 52 item 2): `task.late_risk` goes out on `planning.<id>` and to the partners'
 * webhooks when a stop's ETA (etas.ts) comes to lie after its window's end, once, until the stop is on time again
 * (`task.back_on_time`) or done (then nothing is said: the task event said it).
 *
 * A stop's risk is kept on its runsheet's claim (`ASSIGN#<runsheet>`, `late:<kind>:<task>`: since when, the ETA and
 * lateness that raised it), written only when it changes, each change one UpdateItem whose condition is the state it
 * leaves (absent to raise, present to clear): of two checks racing over the same stop one write succeeds, and only its
 * check announces. The claim is what a cancel or a give-back deletes, so the state goes with the runsheet's driver.
 *
 * Where the check runs (docs/live-operations.md "Stops at risk", with its costs):
 * - on a fix (L1, X13, `checkRisksAfterFix`): the first fix the service stores in a clock minute for its driver. The
 *   fix's own UpdateItem answers the server time of the fix it replaced (free), so knowing whether a check is due
 *   costs nothing; a due check Queries the driver's runsheets under way (GSI1) and checks each;
 * - on a task event (X20, `checkRunsheetRisk`): its runsheet, from the driver's last fix;
 * - on the clock (the sweep, `sweepLateRisks`, once a minute): the runsheets under way, listed by the sweep index
 *   (GSI3 `LIVE#<org>`, keys.ts `liveRunsheetKeys`), whose driver stored no fix this minute (a fix checked the others),
 *   from their last fix while it is at most 10 minutes old.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { mapLimited } from '#shared/concurrency';
import { db, isConditionalFailure, mainTableName, queryAll } from '#shared/db/client';
import { orgListEntries } from '#shared/db/shards';
import { isDomainError } from '#shared/errors';
import type { StoredFix } from '#shared/locations/fixes';
import { currentFixes } from '#shared/locations/positions';
import { type Announcement, frame, publish, toPartners } from '#shared/planning/announcements';
import {
  type EtaStop,
  FIX_MAX_AGE_MS,
  type LastFix,
  type ReckonedStop,
  reckonRunsheet,
  remainingStops,
  type StopKind,
} from '#shared/planning/etas';
import {
  assignKey,
  driverRunsheetsPartition,
  LIVE_RUNSHEETS,
  liveDriverOf,
  planIdOf,
  progressPrefix,
} from '#shared/planning/keys';
import type { TaskStatus } from '#shared/planning/lifecycle';
import { findPlanning, readRunsheetItem } from '#shared/planning/planning-records';

/** A driver's runsheets are checked at most once a clock minute: by its first fix in it, else by the sweep. */
export const RISK_CHECK_PERIOD_MS = 60_000;
const minuteOf = (ms: number) => Math.floor(ms / RISK_CHECK_PERIOD_MS);

/** The claim's attribute that holds a stop's risk. */
export const riskAttribute = (stop: { kind: StopKind; taskId: string }) => `late:${stop.kind}:${stop.taskId}`;
const RISK_PREFIX = 'late:';

/** A stop's risk as its claim keeps it. */
interface StoredRisk {
  since: string;
  eta_utc: string;
  late_by_s: number;
}

export type RiskMove =
  /** The stop became at risk: `task.late_risk`. */
  | { move: 'raise'; attribute: string; stop: ReckonedStop & { etaMs: number; lateByS: number } }
  /** The stop at risk is on time again: `task.back_on_time`. */
  | { move: 'clear'; attribute: string; stop: ReckonedStop & { etaMs: number; lateByS: number } }
  /** The stop at risk is done (or no longer the runsheet's): its state goes, silently. */
  | { move: 'drop'; attribute: string };

/**
 * What changed (pure): `stops` are the runsheet's stops still to do, with their ETAs when a recent fix gave them
 * (`etaMs`/`lateByS` null or absent: not known, and nothing is judged of that stop); `stored` the risk attributes its
 * claim holds. A stop without an ETA keeps its state: a driver out of coverage is not on time again.
 */
export function riskMoves(
  stops: readonly (EtaStop & Partial<ReckonedStop>)[],
  stored: ReadonlySet<string>,
): RiskMove[] {
  const moves: RiskMove[] = [];
  const remaining = new Set(stops.map(riskAttribute));
  for (const attribute of stored) if (!remaining.has(attribute)) moves.push({ move: 'drop', attribute });
  for (const stop of stops) {
    const { etaMs, lateByS } = stop;
    if (etaMs === undefined || etaMs === null || lateByS === undefined || lateByS === null) continue;
    const attribute = riskAttribute(stop);
    const known = { ...stop, etaMs, lateByS };
    if (lateByS > 0 && !stored.has(attribute)) moves.push({ move: 'raise', attribute, stop: known });
    if (lateByS === 0 && stored.has(attribute)) moves.push({ move: 'clear', attribute, stop: known });
  }
  return moves;
}

/** One change written to the claim; false when another check wrote it first (or the claim is gone or finished). */
async function writeMove(planId: string, runsheetId: string, driverId: string, move: RiskMove, now: string) {
  const names = { '#risk': move.attribute };
  const command =
    move.move === 'raise'
      ? new UpdateCommand({
          TableName: mainTableName(),
          Key: assignKey(planId, runsheetId),
          UpdateExpression: 'SET #risk = :risk',
          ConditionExpression:
            'driver_id = :driver AND attribute_not_exists(completed_at) AND attribute_not_exists(#risk)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':risk': {
              since: now,
              eta_utc: new Date(move.stop.etaMs).toISOString(),
              late_by_s: move.stop.lateByS,
            } satisfies StoredRisk,
            ':driver': driverId,
          },
        })
      : new UpdateCommand({
          TableName: mainTableName(),
          Key: assignKey(planId, runsheetId),
          UpdateExpression: 'REMOVE #risk',
          ConditionExpression: 'attribute_exists(#risk)',
          ExpressionAttributeNames: names,
        });
  try {
    await db().send(command);
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

/** The runsheet's claim, its item and its tasks' statuses (one Query of its progress), or undefined when gone. */
async function readForCheck(planId: string, runsheetId: string) {
  const key = assignKey(planId, runsheetId);
  const [claimOut, runsheet, progress] = await Promise.all([
    db().send(new GetCommand({ TableName: mainTableName(), Key: key })),
    readRunsheetItem(planId, runsheetId).catch((error: unknown) => {
      if (isDomainError(error, 'not_found')) return undefined;
      throw error;
    }),
    queryAll<{ task_id: string; status: TaskStatus }>({
      TableName: mainTableName(),
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :progress)',
      ExpressionAttributeValues: { ':pk': key.PK, ':progress': progressPrefix(runsheetId) },
      ProjectionExpression: 'task_id, #status',
      ExpressionAttributeNames: { '#status': 'status' },
    }),
  ]);
  const claim = claimOut.Item;
  if (!claim || !runsheet) return undefined;
  const statuses = new Map(progress.map((p) => [p.task_id, p.status]));
  return { claim, runsheet, statusOf: (taskId: string) => statuses.get(taskId) ?? ('pending' as const) };
}

/**
 * Checks one runsheet of `driverId` from `fix` (their last; undefined or too old: no ETA, only the stops done are
 * settled) and announces what changed. Answers how many events it sent.
 */
export async function checkRunsheetRisk(
  planId: string,
  runsheetId: string,
  driverId: string,
  fix: LastFix | undefined,
): Promise<number> {
  const read = await readForCheck(planId, runsheetId);
  if (!read || read.claim['driver_id'] !== driverId || read.claim['completed_at']) return 0;
  const { claim, runsheet, statusOf } = read;
  const tasks = runsheet.tasks ?? [];
  const input = { tasks, stops: runsheet.stops, travel: runsheet.travel, statusOf, fix, nowMs: clock.nowMs() };
  const stops = reckonRunsheet(input)?.stops ?? remainingStops(tasks, runsheet.stops, statusOf);
  const stored = new Set(Object.keys(claim).filter((name) => name.startsWith(RISK_PREFIX)));
  const moves = riskMoves(stops, stored);
  if (moves.length === 0) return 0;
  const now = clock.nowIso();
  const written = await mapLimited(moves, 4, async (move) =>
    (await writeMove(planId, runsheetId, driverId, move, now)) ? move : undefined,
  );
  const announced = written.filter((move) => move !== undefined && move.move !== 'drop');
  if (announced.length === 0) return 0;
  const planning = await findPlanning(planId);
  if (!planning) return 0;
  const driver = { id: driverId, name: String(claim['driver_name'] ?? '') };
  await publish(
    riskAnnouncements({ planId, orgId: planning.org_id, runsheetId, driver, now }, announced, claim, tasks),
  );
  return announced.length;
}

/**
 * What the written moves tell (pure), in order: a raise `task.late_risk`, a clear `task.back_on_time`, each on the
 * planning's channel, then to its partners; a drop tells nothing. `claim` is the claim as read before the moves (a
 * clear names the raise's time from it), `tasks` the runsheet's (a stop's `task_ref`).
 */
export function riskAnnouncements(
  at: { planId: string; orgId: string; runsheetId: string; driver: { id: string; name: string }; now: string },
  moves: readonly (RiskMove | undefined)[],
  claim: Record<string, unknown>,
  tasks: readonly { id: string; [field: string]: unknown }[],
): Announcement[] {
  const { planId, runsheetId, driver, now } = at;
  const refOf = new Map(tasks.map((task) => [task.id, task['task_ref']]));
  const told: Announcement[] = [];
  for (const move of moves) {
    if (move?.move !== 'raise' && move?.move !== 'clear') continue;
    const { stop } = move;
    const raised = move.move === 'raise';
    const name = raised ? 'task.late_risk' : 'task.back_on_time';
    // The transition's own key: the raise's time, which the clear names too (a repeat is the same frame and webhook).
    const since = raised ? now : String((claim[move.attribute] as StoredRisk | undefined)?.since ?? now);
    const key = `${runsheetId}:${stop.taskId}:${stop.kind}:${raised ? 'late_risk' : 'back_on_time'}:${since}`;
    const ref = refOf.get(stop.taskId);
    const data = {
      planning_id: planId,
      runsheet_id: runsheetId,
      task_id: stop.taskId,
      ...(ref ? { task_ref: String(ref) } : {}),
      driver,
      stop_kind: stop.kind,
      window_end_utc: stop.closesMs === undefined ? null : new Date(stop.closesMs).toISOString(),
      eta_utc: new Date(stop.etaMs).toISOString(),
      late_by_s: stop.lateByS,
    };
    told.push(frame(`planning.${planId}`, name, { key, data }), toPartners(at.orgId, name, data, key));
  }
  return told;
}

/**
 * The check a fix may bring (L1, X13): due when the fix is the first its driver stored in this clock minute (the fix
 * it replaced was of an earlier one; a driver's very first fix checks nothing: the sweep does within the minute).
 * Then the driver's runsheets under way (GSI1, keys only: 0.5 RCU) are each checked from this fix.
 */
export async function checkRisksAfterFix(stored: StoredFix | undefined): Promise<number> {
  if (!stored?.previousServerTime) return 0;
  if (minuteOf(Date.parse(stored.previousServerTime)) === minuteOf(Date.parse(stored.fix.server_time))) return 0;
  const out = await db().send(
    new QueryCommand({
      TableName: mainTableName(),
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': driverRunsheetsPartition(stored.driverId) },
      ProjectionExpression: 'PK, SK',
    }),
  );
  let sent = 0;
  for (const claim of out.Items ?? []) {
    const runsheetId = String(claim['SK']).slice('ASSIGN#'.length);
    sent += await checkRunsheetRisk(planIdOf(claim['PK']), runsheetId, stored.driverId, stored.fix);
  }
  return sent;
}

/**
 * An organisation's mark of the minute its runsheets were last checked by the clock: one sweep a minute checks them,
 * however often the sweep runs and in however many containers (a key of the organisation's own: no key is shared by
 * every organisation).
 */
const sweepMarkKey = (orgId: string) => ({ PK: `ORG#${orgId}#LATERISK`, SK: 'MINUTE' });
/** Runsheets a sweep checks at once. */
const CHECKS_IN_FLIGHT = 8;
/** The minute this process's sweep last looked: within it, a sweep reads nothing (the host sweeps every 2 s). */
let lookedInMinute: number | undefined;

/** Marks `minute` as the organisation's checked one; false when another sweep marked it already. */
async function markMinute(orgId: string, minute: number): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: sweepMarkKey(orgId),
        UpdateExpression: 'SET #minute = :minute',
        ConditionExpression: 'attribute_not_exists(#minute) OR #minute <> :minute',
        ExpressionAttributeNames: { '#minute': 'minute' },
        ExpressionAttributeValues: { ':minute': minute },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

/**
 * The clock's check (the sweep, `orgs` its run's organisations): once a clock minute, every runsheet under way whose
 * driver stored no fix in this minute is checked from that driver's last fix (at most 10 minutes old; older gives no
 * ETA, and a later fix checks it). Answers how many events it sent.
 */
export async function sweepLateRisks(orgs: readonly string[]): Promise<number> {
  const nowMs = clock.nowMs();
  const minute = minuteOf(nowMs);
  if (lookedInMinute === minute) return 0;
  const listed = await orgListEntries<{ PK: string; SK: string; GSI3SK: string }>(
    LIVE_RUNSHEETS,
    { TableName: mainTableName(), IndexName: 'GSI3', ProjectionExpression: 'PK, SK, GSI3SK' },
    orgs,
  );
  // Only once the lists were read: a read that failed (a dependency's fault) leaves the minute to the next sweep.
  lookedInMinute = minute;
  // Each organisation with runsheets under way is checked by one sweep a minute: the one that marks its minute.
  const marked = new Set<string>();
  for (const orgId of new Set(listed.map((entry) => entry.orgId)))
    if (await markMinute(orgId, minute)) marked.add(orgId);
  const entries = listed.filter((entry) => marked.has(entry.orgId));
  const byOrg = new Map<string, Set<string>>();
  for (const { orgId, item } of entries)
    byOrg.set(orgId, (byOrg.get(orgId) ?? new Set()).add(liveDriverOf(item.GSI3SK)));
  const fixes = new Map<string, LastFix>();
  for (const [orgId, drivers] of byOrg) {
    for (const [driverId, fix] of await currentFixes(orgId, [...drivers])) fixes.set(driverId, fix);
  }
  const due = entries.filter(({ item }) => {
    const fix = fixes.get(liveDriverOf(item.GSI3SK));
    const fixMs = fix ? Date.parse(fix.server_time) : Number.NaN;
    return minuteOf(fixMs) !== minute && nowMs - fixMs <= FIX_MAX_AGE_MS;
  });
  const sent = await mapLimited(due, CHECKS_IN_FLIGHT, ({ item }) => {
    const driverId = liveDriverOf(item.GSI3SK);
    return checkRunsheetRisk(planIdOf(item.PK), item.SK.slice('ASSIGN#'.length), driverId, fixes.get(driverId));
  });
  return sent.reduce((sum, n) => sum + n, 0);
}
