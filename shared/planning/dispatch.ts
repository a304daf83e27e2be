/**
 * Dispatch until every runsheet has a driver, or a person knows why (contract 4.7).
 *
 * A runsheet's offer group (`BPLAN#<plan>#<n> / RSPAIRS#<runsheet>`) is its dispatch record: it holds the drivers ever
 * offered it by wave (`offered`, which with `job_id` names their pairs: shared/planning/offer-groups.ts), the last wave
 * sent (`wave`) and how many may be (`waves_allowed`), how many offers are open and the soonest expiry (`open`), and,
 * once the service stops, `unassigned` (the reason) or `cancelled`. Who won it
 * is the claim `ASSIGN#<runsheet>` that the accept writes in its transaction; a driver's count of the planning's
 * runsheets is `WINS#<driver>`. The status every reader sees (`runsheetStatus`) follows from those two items alone.
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
 */
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dutyOf, type UserRecord, userKey } from '#shared/accounts/users';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { mapLimited } from '#shared/concurrency';
import {
  cancelledIndexes,
  db,
  getAll,
  isConditionalFailure,
  mainTableName,
  queryAll,
  transactWrite,
} from '#shared/db/client';
import { type PageRequest, queryPage } from '#shared/db/paging';
import { queryPartitions } from '#shared/db/shards';
import { conflict, invalidAt, isDomainError, notFound } from '#shared/errors';
import { newUuid } from '#shared/ids';
import { releaseTasks } from '#shared/imports/tasks';
import { currentFixes, driversIndexedNear } from '#shared/locations/locations';
import { logger } from '#shared/log';
import { sendPushMessages } from '#shared/notifications/push-keys';
import { publishEvent, publishEvents } from '#shared/notifications/realtime';
import {
  closedAlready,
  EXPIRY_GRACE_MS,
  offerNew,
  type PairRecord,
  type PairState,
  pairEventKey,
  pairFromItem,
  putNewPair,
  readPair,
  recordEvent,
  type StatusEntry,
  servicePair,
} from '#shared/planning/broadcasts';
import {
  type DriverFacts,
  type EligibilityParameters,
  eligibleDrivers,
  type OfferCounts,
  type UnassignedReason,
  unassignedReason,
} from '#shared/planning/eligibility';
import {
  assignKey,
  groupKey,
  groupRunsheetIdOf,
  PLAN_SHARDS,
  pairKey,
  planningDriverKey,
  planPartitions,
  runsheetKey,
  winsKey,
  winsPartition,
} from '#shared/planning/keys';
import { askRunsheet, isOpenPair, pairMove, runsheetRefusal } from '#shared/planning/lifecycle';
import {
  groupPairIds,
  type OfferListing,
  type OpenOffers,
  offeredDrivers,
  offeredEntry,
  openOffers,
  waveDrivers,
  wavePairId,
} from '#shared/planning/offer-groups';
import { planningRunsheets } from '#shared/planning/offered-runsheets';
import { findPlanning, type Planning, planningContents, visiblePlanning } from '#shared/planning/planning-records';
import { JOB_DEFAULTS } from '#shared/planning/schemas';
import { duePage, registeredPlannings, waveDueKey, wavePlansPartition } from '#shared/planning/wave-plans';
import { publishPartnerEvent } from '#shared/webhooks/deliveries';

export const DRIVER_APPLICATION = () => process.env['DRIVER_APPLICATION_KEY'] ?? 'driver-app';

/** A wave's claim: how long the worker that claimed it has to send it before another may finish it. */
const WAVE_LEASE_MS = 60_000;
/** How old the wave worker's copy of the drivers' runsheet counts may be when it chooses a wave's drivers. */
const WINS_FRESH_MS = 1_000;
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

/** The group item as stored (the members this module reads; its pairs and drivers: OfferListing). */
export interface DispatchGroup extends OfferListing {
  SK: string;
  wave?: number;
  waves_allowed?: number;
  open?: OpenOffers;
  unassigned?: UnassignedReason;
  cancelled?: { at: string; reason: string; by: string };
  /**
   * A wave claimed and not yet all sent: its number, expiry, the claim's lease and the offers' ttl. Its drivers are the
   * wave's entries in `offered`; only a wave whose pairs are listed by id (sent under another job than the group's)
   * carries them here, with its job.
   */
  pending?: { wave: number; expires: string; lease_until: number; ttl_s: number; drivers?: string[]; job_id?: string };
  /** X17's settings for the wave it asked for. */
  reoffer?: { wave: number; max_candidates?: number; offer_ttl_s?: number };
  GSI3SK?: string;
  gen?: number;
}

export interface Assignment {
  pair_id: string;
  driver_id: string;
  driver_name?: string;
  assigned_at: string;
  /** Contract 4.8, written by its driver's task events (planning/execution.ts). */
  started_at?: string;
  tasks_done?: number;
  tasks_total?: number;
  completed_at?: string;
}

/** A runsheet's status and its members (contract 4.7's table), from its group and its claim. */
export function runsheetStatus(group: DispatchGroup | undefined, assignment: Assignment | undefined) {
  if (group?.cancelled) {
    return { status: 'cancelled' as const, cancelled_at: group.cancelled.at, cancel_reason: group.cancelled.reason };
  }
  if (assignment?.started_at) {
    const driver = { id: assignment.driver_id, name: assignment.driver_name ?? '' };
    const progress = {
      assigned_driver: driver,
      assigned_at: assignment.assigned_at,
      started_at: assignment.started_at,
      tasks_done: Number(assignment.tasks_done ?? 0),
      tasks_total: Number(assignment.tasks_total ?? 0),
    };
    if (assignment.completed_at) {
      return { status: 'completed' as const, ...progress, completed_at: assignment.completed_at };
    }
    return { status: 'in_progress' as const, ...progress };
  }
  if (assignment) {
    return {
      status: 'assigned' as const,
      assigned_driver: { id: assignment.driver_id, name: assignment.driver_name ?? '' },
      assigned_at: assignment.assigned_at,
    };
  }
  if (!group?.wave) return { status: 'open' as const };
  const [openCount, soonest] = group.open ?? [0];
  if (group.unassigned && openCount === 0) {
    // A reason stored before `not_asked` existed reads as 0.
    const reason = { ...group.unassigned, not_asked: group.unassigned.not_asked ?? 0 };
    return { status: 'unassigned' as const, wave: group.wave, unassigned_reason: reason };
  }
  // All closed and the next wave about to be judged: still in dispatch, with no offer open for a moment.
  return {
    status: 'offered' as const,
    wave: group.wave,
    offers_open: openCount,
    offer_expires_at: soonest ?? null,
  };
}

export type RunsheetStatusView = ReturnType<typeof runsheetStatus>;

/** The dispatch records (groups and claims) of the runsheets named: two batched reads. */
export async function dispatchRecords(planId: string, runsheetIds: string[], consistent = false) {
  const read = consistent ? { ConsistentRead: true } : {};
  const [groups, claims] = await Promise.all([
    getAll<DispatchGroup>(
      mainTableName(),
      runsheetIds.map((id) => groupKey(planId, id)),
      read,
    ),
    getAll<Assignment & { SK: string }>(
      mainTableName(),
      runsheetIds.map((id) => assignKey(planId, id)),
      read,
    ),
  ]);
  const groupOf = new Map(groups.map((g) => [groupRunsheetIdOf(g.SK), g]));
  const claimOf = new Map(claims.map((c) => [c.SK.slice('ASSIGN#'.length), c]));
  return (id: string) => runsheetStatus(groupOf.get(id), claimOf.get(id));
}

/**
 * The dispatch records of a page of runsheets (X14, in the table's order): the page's ids are a range of the planning's (its runsheet items
 * and its groups and claims sort by the same id), so two range Queries read them, charged by their bytes, not 0.5 RCU
 * an item as a BatchGetItem is (172 → about 80 RCU for 500 runsheets in the dispatch day's bench).
 */
async function pageRecords(planId: string, runsheetIds: string[]) {
  // In the page's order, which is the table's (its first and last are the range's ends, whatever the characters).
  const [first, last] = [runsheetIds[0], runsheetIds.at(-1)];
  if (first === undefined || last === undefined) return () => runsheetStatus(undefined, undefined);
  // A short page: its groups and claims by key (0.5 RCU an item) cost less than two Queries a shard.
  if (runsheetIds.length < PLAN_SHARDS) return dispatchRecords(planId, runsheetIds);
  const range = (prefix: string) =>
    queryPartitions(planPartitions(planId), {
      TableName: mainTableName(),
      KeyConditionExpression: 'PK = :pk AND SK BETWEEN :first AND :last',
      ExpressionAttributeValues: {
        ':first': `${prefix}${first}`,
        ':last': `${prefix}${last}`,
      },
    });
  const [groups, claims] = await Promise.all([range('RSPAIRS#'), range('ASSIGN#')]);
  const groupOf = new Map(groups.map((g) => [groupRunsheetIdOf(g['SK']), g as unknown as DispatchGroup]));
  const claimOf = new Map(claims.map((c) => [String(c['SK']).slice('ASSIGN#'.length), c as unknown as Assignment]));
  return (id: string) => runsheetStatus(groupOf.get(id), claimOf.get(id));
}

/** Every dispatch record of a planning (its runsheets' groups and claims): two Queries, one item a runsheet each. */
export async function planningRecords(planId: string) {
  const query = (prefix: string) =>
    queryPartitions(planPartitions(planId), {
      TableName: mainTableName(),
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':prefix': prefix },
    });
  const [groups, claims] = await Promise.all([query('RSPAIRS#'), query('ASSIGN#')]);
  const groupOf = new Map(groups.map((g) => [groupRunsheetIdOf(g['SK']), g as unknown as DispatchGroup]));
  const claimOf = new Map(claims.map((c) => [String(c['SK']).slice('ASSIGN#'.length), c as unknown as Assignment]));
  return { groupOf, claimOf };
}

export async function planningStatuses(planId: string) {
  const { groupOf, claimOf } = await planningRecords(planId);
  return (id: string) => runsheetStatus(groupOf.get(id), claimOf.get(id));
}

/**
 * What a planning's dispatch has come to, for the job's completion events (contract 4.7): its runsheets by status
 * and its offers (pairs) by outcome, from the dispatch records alone, never the pair records (a planning's pairs
 * are up to 50 a runsheet, each with its tasks). `won` counts the runsheets a driver holds (an accept or an X16
 * assignment), `open` the offers still awaiting an answer, `closed` every other offer: declined by its driver,
 * expired, closed by the system or given back.
 */
export async function dispatchCounts(planId: string, totalRunsheets: number) {
  const { groupOf, claimOf } = await planningRecords(planId);
  const runsheets = { total: totalRunsheets, open: 0, offered: 0, assigned: 0, unassigned: 0, cancelled: 0 };
  const ids = new Set([...groupOf.keys(), ...claimOf.keys()]);
  let open = 0;
  for (const id of ids) {
    const status = runsheetStatus(groupOf.get(id), claimOf.get(id));
    // Under way or done, a runsheet is still its driver's: counted as assigned (docs/webhooks.md).
    runsheets[status.status === 'in_progress' || status.status === 'completed' ? 'assigned' : status.status]++;
    // Open offers as X14 counts them: only an offered runsheet's (a won or cancelled one's are closed, whatever its
    // group's map of open offers still lists until the wave worker next looks at it).
    if (status.status === 'offered') open += status.offers_open;
  }
  // A runsheet without dispatch records was never offered.
  runsheets.open += Math.max(0, totalRunsheets - ids.size);
  let offered = 0;
  for (const [id, group] of groupOf) offered += groupPairIds(group, id).length;
  const won = claimOf.size;
  return { runsheets, pairs: { offered, open, won, closed: Math.max(0, offered - open - won) } };
}

/**
 * X14: the planning's runsheets without their tasks, each with its status; one Query a page on the planning's
 * runsheet items, then the page's dispatch records. `status` keeps the page's runsheets of that status (a page may
 * hold fewer than `per_page`: follow `next_page_token`).
 */
export async function listRunsheets(caller: Caller, planId: string, status: string | undefined, page: PageRequest) {
  await visiblePlanning(caller, planId);
  const found = await queryPage(
    {
      TableName: mainTableName(),
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :rs)',
      ExpressionAttributeValues: { ':pk': runsheetKey(planId, '').PK, ':rs': runsheetKey(planId, '').SK },
      ProjectionExpression: 'PK, SK, id, #n, service_type, tasks',
      ExpressionAttributeNames: { '#n': 'name' },
    },
    page,
    (item) => item as { id: string; name?: string; service_type?: string; tasks?: unknown[] },
  );
  const statusOf = await pageRecords(
    planId,
    found.items.map((r) => r.id),
  );
  const runsheets = found.items
    .map((r) => ({
      id: r.id,
      ...(r.name !== undefined ? { name: r.name } : {}),
      ...(r.service_type !== undefined ? { service_type: r.service_type } : {}),
      tasks_total: r.tasks?.length ?? 0,
      ...statusOf(r.id),
    }))
    .filter((r) => !status || r.status === status);
  return { runsheets, meta: found.meta };
}

// ----- the facts eligibility judges -----

/** A runsheet as the dispatch judges it: its first pickup and service type. */
export function dispatchRunsheet(runsheet: { id: string; tasks: Record<string, unknown>[]; service_type?: string }) {
  const address = (runsheet.tasks[0]?.['from_address'] ?? undefined) as
    | { latitude?: number; longitude?: number }
    | undefined;
  const pickup =
    typeof address?.latitude === 'number' && typeof address.longitude === 'number'
      ? { latitude: address.latitude, longitude: address.longitude }
      : undefined;
  return { id: runsheet.id, pickup, service_type: runsheet.service_type ?? null };
}

/**
 * What eligibility needs of each of the planning's drivers but the runsheets offered them: duty and service types
 * (their user items, one batched read), their current fixes, and how many of the planning's runsheets each holds
 * (one Query of the plan's counts; `wins`: another read of them).
 */
export async function driverFacts(
  planning: Planning,
  drivers: { id: string; name?: string }[],
  wins: (ids: string[]) => Promise<Map<string, number>> = () => runsheetsWon(planning.id),
) {
  const ids = drivers.map((d) => d.id);
  const [users, fixes, winsOf] = await Promise.all([
    getAll<Pick<UserRecord, 'id' | 'created_at' | 'driver_profile' | 'name'>>(mainTableName(), ids.map(userKey), {
      ProjectionExpression: 'id, created_at, driver_profile, #n',
      ExpressionAttributeNames: { '#n': 'name' },
    }),
    currentFixes(planning.org_id, ids),
    wins(ids),
  ]);
  const userOf = new Map(users.map((u) => [u.id, u]));
  return drivers.map((driver): Omit<DriverFacts, 'offered'> & { name: string } => {
    const user = userOf.get(driver.id);
    return {
      id: driver.id,
      name: driver.name ?? user?.name ?? '',
      on_duty: user ? dutyOf(user).on_duty : false,
      location: fixes.get(driver.id),
      service_types: user?.driver_profile?.service_types ?? [],
      runsheets_won: winsOf.get(driver.id) ?? 0,
    };
  });
}

/** How many of the planning's runsheets each driver holds: one consistent Query of the plan's small counts. */
export async function runsheetsWon(planId: string): Promise<Map<string, number>> {
  const wins = await queryAll<{ SK: string; wins?: number }>({
    TableName: mainTableName(),
    ConsistentRead: true,
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :wins)',
    ExpressionAttributeValues: { ':pk': winsPartition(planId), ':wins': 'WINS#' },
  });
  return new Map(wins.map((w) => [w.SK.slice('WINS#'.length), Number(w.wins ?? 0)]));
}

/** How many of the planning's runsheets some of its drivers hold: their counts by key, read consistently. */
async function runsheetsWonBy(planId: string, driverIds: string[]): Promise<Map<string, number>> {
  const wins = await getAll<{ SK: string; wins?: number }>(
    mainTableName(),
    driverIds.map((id) => winsKey(planId, id)),
    { ConsistentRead: true },
  );
  return new Map(wins.map((w) => [w.SK.slice('WINS#'.length), Number(w.wins ?? 0)]));
}

export const parametersOf = (planning: Planning): EligibilityParameters & { max_waves: number } => ({
  max_runsheets_per_driver: planning.job?.max_runsheets_per_driver ?? JOB_DEFAULTS.max_runsheets_per_driver,
  max_location_age_s: planning.job?.max_location_age_s ?? JOB_DEFAULTS.max_location_age_s,
  max_waves: planning.job?.max_waves ?? JOB_DEFAULTS.max_waves,
});

// ----- the wave worker -----

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

/** What a judgement knows of its planning: the planning, runsheets, and drivers' facts (all of them, or X17's near). */
interface JudgeContext {
  planning: Planning;
  runsheets: Map<string, ReturnType<typeof dispatchRunsheet>>;
  /** The runsheets' names as the sweep read them (a wave's pairs and push name their runsheet). */
  names: Map<string, string | undefined>;
  facts: Awaited<ReturnType<typeof driverFacts>>;
}

/**
 * X17's radii around its runsheet's first pickup (metres), tried in turn until enough eligible drivers are within one
 * (`WaveJudge.nearest`), with the finest cells their geo index Queries range over (each Query at least 0.5 RCU): 1 km
 * in precision-6 cells is 8 Queries in the tropics, 16 in London; 4 km in precision-5 cells 10 and 8 (34 and 36 in
 * precision-6 ones), reading the entries of about 2.8 times the circle's area: fewer RCU unless the circle holds
 * hundreds of drivers; 25 km 32 and 50. Beyond the last, the whole planning is read.
 */
const NEAR_RADII: { radiusM: number; precision: number }[] = [
  { radiusM: 1_000, precision: 6 },
  { radiusM: 4_000, precision: 5 },
  { radiusM: 25_000, precision: 5 },
];
/** X17 reads the drivers found near its runsheet this many at a time, nearest first. */
const NEAR_BATCH = 8;
/** An eventually consistent read of up to 4 KB (an item by key, or a Query's first 4 KB), in RCU. */
const READ_RCU = 0.5;
/**
 * X17 reads every driver of a planning of at most this many (`WaveJudge.everyDriver`) instead of searching near its
 * runsheet, the cheaper read there. Every driver: their list (one Query of the planning's driver items, READ_RCU up to
 * 4 KB) and counts won (one consistent Query, 2 × READ_RCU), 1.5 RCU, then 1 a driver (user item and fix). The near
 * search: the 1 km circle's index Queries (8, 16 at London's latitude: 4 RCU or more) and, once drivers are found
 * there, a batch of NEAR_BATCH read (membership item, user item, fix: 1.5 RCU each, 12) before any count, 16 RCU.
 * Equal at (16 − 1.5) / 1 = 14.5 drivers: on this path X17 reads at most 15.5 RCU beyond what both paths read (the
 * request's token, the group, claim and pairs, the planning and the runsheet), whatever the planning's runsheets;
 * above it, what the near search reads, which follows the drivers around the pickup, not the planning's size.
 */
export const EVERY_DRIVER_MAX = Math.floor((8 * READ_RCU + NEAR_BATCH * 3 * READ_RCU - 3 * READ_RCU) / (2 * READ_RCU));

const withOffered = (facts: JudgeContext['facts'], offeredTo: ReadonlySet<string>, runsheetId: string): DriverFacts[] =>
  facts.map((f) => ({ ...f, offered: offeredTo.has(f.id) ? new Set([runsheetId]) : new Set<string>() }));

/**
 * Judges the runsheets of one planning; reads the planning and its drivers' facts once, when first needed. X17's
 * (`oneRunsheet`) reads only the drivers near its runsheet when they suffice (`nearest`).
 */
export class WaveJudge {
  private context?: Promise<JudgeContext>;

  /** X17's reads of its one runsheet and the drivers near it, when they sufficed. */
  private near?: JudgeContext;

  /** The drivers' counts of won runsheets, read again when older than WINS_FRESH_MS (drivers win all along a sweep). */
  private wins?: { at: number; read: Promise<Map<string, number>> };

  constructor(
    private readonly planId: string,
    private readonly oneRunsheet = false,
  ) {}

  /**
   * The facts with the drivers' current counts of runsheets: a sweep that works through a big day for seconds would
   * otherwise offer runsheets to drivers who have won their last one since it began (closed at once after the send,
   * `closeAtCapacity`, but an offer the driver's app shows for a moment).
   */
  private async currentFacts() {
    const { facts } = await this.load();
    const nowMs = clock.nowMs();
    if (!this.wins || nowMs - this.wins.at > WINS_FRESH_MS) this.wins = { at: nowMs, read: runsheetsWon(this.planId) };
    const wins = await this.wins.read;
    return facts.map((f) => ({ ...f, runsheets_won: wins.get(f.id) ?? 0 }));
  }

  /**
   * X17 (issue 45): the nearest eligible drivers of one runsheet without reading every driver of the planning, unless
   * the planning has so few that reading them all is the cheaper (EVERY_DRIVER_MAX, `everyDriver`). The
   * live positions within a radius of its first pickup (the geo index, as L4 reads it: the planning's organisation's
   * drivers and freelance ones, whose fixes `currentFixes` reads), nearest cell first, a batch at a time kept to the
   * planning's drivers (their membership items by key) and only those drivers' facts read, until `wanted` eligible
   * drivers are nearer than any driver not read yet; the radius widens (NEAR_RADII) while they are not. None
   * unread can be nearer: an eligible driver has a fresh fix, so its index entry is found whenever it is within the
   * radius (the index lagging its items aside, as for L4). Every driver of the planning read, the eligible ones found
   * are all there are. Undefined when only the whole read answers as before: a runsheet without coordinates (its
   * drivers ranked by id) or not found, nobody eligible near enough (the unassigned reason, contract 4.7, counts the
   * exclusions among all the planning's drivers), or fewer than `wanted` within the widest radius.
   */
  private async nearest(runsheetId: string, offeredTo: ReadonlySet<string>, asked: number | undefined, nowMs: number) {
    const planId = this.planId;
    const [planning, item] = await Promise.all([
      findPlanning(planId, true),
      db()
        .send(
          new GetCommand({
            TableName: mainTableName(),
            Key: runsheetKey(planId, runsheetId),
            ProjectionExpression: 'id, #n, tasks, service_type',
            ExpressionAttributeNames: { '#n': 'name' },
          }),
        )
        .then((out) => out.Item),
    ]);
    if (!planning || !item) return undefined;
    const runsheet = dispatchRunsheet(item as Parameters<typeof dispatchRunsheet>[0]);
    const judged = (facts: JudgeContext['facts']) => {
      this.near = {
        planning,
        runsheets: new Map([[runsheetId, runsheet]]),
        names: new Map([[runsheetId, item['name'] as string | undefined]]),
        facts,
      };
      return this.near;
    };
    if (planning.total_drivers <= EVERY_DRIVER_MAX) return judged(await this.everyDriver(planning));
    if (!runsheet.pickup) return undefined;
    const parameters = parametersOf(planning);
    const wanted = asked ?? planning.job?.max_candidates ?? JOB_DEFAULTS.max_candidates;
    const looked = new Set<string>();
    const facts: JudgeContext['facts'] = [];
    const eligibleOf = () =>
      eligibleDrivers(runsheet, withOffered(facts, offeredTo, runsheetId), parameters, nowMs).eligible;
    for (const { radiusM: radius, precision } of NEAR_RADII) {
      const maxAgeS = parameters.max_location_age_s;
      const found = await driversIndexedNear(runsheet.pickup, radius, maxAgeS, planning.org_id, precision);
      const unread = found.filter((driver) => !looked.has(driver.id));
      // Once at least, so that drivers read at a smaller radius are judged against this one.
      for (let start = 0; start === 0 || start < unread.length; start += NEAR_BATCH) {
        const batch = unread.slice(start, start + NEAR_BATCH).map((driver) => driver.id);
        for (const id of batch) looked.add(id);
        const members = await getAll<{ id: string; name?: string }>(
          mainTableName(),
          batch.map((id) => planningDriverKey(planId, id)),
          { ProjectionExpression: 'id, #n', ExpressionAttributeNames: { '#n': 'name' } },
        );
        if (members.length > 0) {
          // Their counts of runsheets won are read (consistently, by key) only for those every other rule lets through.
          const read = await driverFacts(planning, members, async () => new Map());
          facts.push(...read);
          const open = new Set(eligibleOf().map((e) => e.driver.id));
          const wins = await runsheetsWonBy(
            planId,
            read.filter((f) => open.has(f.id)).map((f) => f.id),
          );
          for (const f of read) f.runsheets_won = wins.get(f.id) ?? 0;
        }
        // Nearer than any driver not read yet: the next one found (their cells' least distance), else the radius.
        const next = unread[start + NEAR_BATCH]?.least;
        const eligible = eligibleOf();
        const sure = eligible.filter((e) => {
          const distance = e.distance_m ?? 0;
          return next === undefined ? distance <= radius : distance < next;
        }).length;
        if (sure >= wanted || (eligible.length > 0 && facts.length >= planning.total_drivers)) return judged(facts);
      }
    }
    return undefined;
  }

  /**
   * X17's read of every driver of a small planning (EVERY_DRIVER_MAX): their list (the planning's driver items, not
   * its runsheets), their facts and counts won, as the whole read has them (the same drivers offered, in the same
   * order: `eligibleDrivers` ranks them whatever the order read).
   */
  private async everyDriver(planning: Planning) {
    const list = planningDriverKey(this.planId, '');
    const drivers = await queryAll<{ id: string; name?: string }>({
      TableName: mainTableName(),
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :driver)',
      ExpressionAttributeValues: { ':pk': list.PK, ':driver': list.SK },
      ProjectionExpression: 'id, #n',
      ExpressionAttributeNames: { '#n': 'name' },
    });
    return driverFacts(planning, drivers);
  }

  private load() {
    this.context ??= (async () => {
      const planning = await findPlanning(this.planId, true);
      if (!planning) throw notFound('planning');
      const { runsheets, drivers } = await planningContents(this.planId);
      return {
        planning,
        runsheets: new Map(runsheets.map((r) => [r.id, dispatchRunsheet(r as never)])),
        names: new Map(runsheets.map((r) => [r.id, r.name])),
        facts: await driverFacts(planning, drivers),
      };
    })();
    return this.context;
  }

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
        recordEvent(planId, p.id, 'system_rejected', open[p.id]!, { reason: 'expired', judgedNow: true }).then(
          (record) => record,
          (error: unknown) => {
            if (!isDomainError(error, 'conflict')) throw error;
            return undefined;
          },
        ),
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
    if (sent.length > 0) {
      await publishEvents(
        `planning.${planId}`,
        'pair.broadcast',
        sent.map(({ record, expiredTime }) => ({
          key: pairEventKey(record.id, 'broadcast'),
          data: {
            pair_id: record.id,
            runsheet_id: runsheetId,
            driver_id: record.pair.driver.id,
            expired_time: expiredTime,
            wave: pending.wave,
          },
        })),
      );
      await mapLimited(sent, 8, ({ record, expiredTime }) =>
        publishEvent(`user.${record.pair.driver.id}`, 'offer.new', offerNew(record, expiredTime)),
      );
      await sendPushMessages({
        application_key: DRIVER_APPLICATION(),
        push_messages: sent.map(({ record }) => ({
          user_id: record.pair.driver.id,
          title: 'New runsheet offered',
          body: `${runsheetName ?? runsheetId} of ${planning.name} awaits your answer`,
          data: { planning_id: planId, pair_ids: [record.id] },
        })),
      });
    }
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
        await recordEvent(planId, record.id, 'system_rejected', clock.nowIso(), { reason }).catch((error: unknown) => {
          if (!closedAlready(error)) throw error;
        });
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
      await recordEvent(this.planId, record.id, 'system_rejected', clock.nowIso(), {
        reason: 'driver_at_capacity',
      }).catch((error: unknown) => {
        // Answered or closed meanwhile: nothing left to close.
        if (!isDomainError(error, 'conflict')) throw error;
      });
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
    // One event per unassignment: X17 may find nobody left and unassign the runsheet again at the same wave.
    const key = `${runsheetId}:unassigned:${group.wave}:${gen}`;
    const data = { planning_id: planId, runsheet_id: runsheetId, unassigned_reason: reason };
    await publishEvent(`planning.${planId}`, 'runsheet.unassigned', { key, data });
    await publishPartnerEvent(planning.org_id, 'runsheet.unassigned', data, key);
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

// ----- the dispatcher's actions (X16–X18) -----

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
  if (askRunsheet('assign', current, driverId) === 'again') return current;
  const group = await readGroup(planId, runsheetId);
  const pairs = await getAll<{ id: string; current_state: PairState; pair: { driver: { id: string } } }>(
    mainTableName(),
    groupPairIds(group, runsheetId).map((id) => pairKey(planId, id)),
    { ProjectionExpression: 'id, current_state, pair', ConsistentRead: true },
  );
  let pair = pairs.find((p) => p.pair.driver.id === driverId && pairMove(p.current_state, 'assigned'));
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
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: groupKey(planId, runsheetId),
        UpdateExpression: 'SET entity = :entity ADD pair_ids :ids, offered :drivers',
        ExpressionAttributeValues: {
          ':entity': 'runsheet_offers',
          ':ids': new Set([id]),
          // Its pair is listed by id (a new one each assignment): the driver's entry names no wave.
          ':drivers': new Set([offeredEntry(0, driverId)]),
        },
      }),
    );
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
    askRunsheet('reoffer', current);
    const group = (await readGroup(planId, runsheetId))!;
    const wave = group.wave ?? 1;
    try {
      await db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: groupKey(planId, runsheetId),
          // A group out of every list (unassigned) goes into the registry: its planning is registered (wave-plans.ts).
          UpdateExpression:
            'SET reoffer = :reoffer, waves_allowed = :allowed, GSI3PK = if_not_exists(GSI3PK, :waves), GSI3SK = :due ADD gen :one',
          ConditionExpression: 'wave = :wave AND (attribute_not_exists(gen) OR gen = :gen)',
          ExpressionAttributeValues: {
            ':reoffer': {
              wave: wave + 1,
              ...(settings.max_candidates ? { max_candidates: settings.max_candidates } : {}),
              ...(settings.offer_ttl_s ? { offer_ttl_s: settings.offer_ttl_s } : {}),
            },
            ':allowed': Math.max(group.waves_allowed ?? wave, wave + 1),
            ':waves': wavePlansPartition(orgId),
            ':due': waveDueKey(clock.nowIso(), planId, runsheetId),
            ':one': 1,
            ':wave': wave,
            ':gen': group.gen ?? 0,
          },
        }),
      );
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
  // (A runsheet under way, contract 4.8, is its driver's: `in_progress` and `completed` refuse.)
  if (askRunsheet('cancel', current) === 'again') {
    // A cancel that died after its mark left its tasks marked: the repeat frees them.
    await releaseCancelledTasks(planning.org_id, planId, runsheetId);
    return current;
  }
  const at = clock.nowIso();
  const mark = {
    TableName: mainTableName(),
    Key: groupKey(planId, runsheetId),
    UpdateExpression: 'SET entity = :entity, cancelled = :cancelled REMOVE GSI3PK, GSI3SK ADD gen :one',
    ConditionExpression: 'attribute_not_exists(cancelled)',
    ExpressionAttributeValues: {
      ':entity': 'runsheet_offers',
      ':cancelled': { at, reason, by: caller.id },
      ':one': 1,
    },
  };
  try {
    if (current.status === 'assigned') {
      // Its driver's first task event may land between the status read and the mark: the mark holds only while the
      // claim has none (the event, for its part, holds only while the runsheet is not cancelled: execution.ts).
      await transactWrite([
        { Update: mark },
        {
          ConditionCheck: {
            TableName: mainTableName(),
            Key: assignKey(planId, runsheetId),
            ConditionExpression: 'attribute_not_exists(started_at)',
          },
        },
      ]);
    } else await db().send(new UpdateCommand(mark));
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    if (cancelledIndexes(error).includes(1)) {
      throw runsheetRefusal('cancel', { ...current, status: 'in_progress' });
    }
  }
  await releaseCancelledTasks(planning.org_id, planId, runsheetId);
  const claim = await readClaim(planId, runsheetId);
  const key = `${runsheetId}:cancelled`;
  if (claim) {
    await db()
      .send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: winsKey(planId, claim.driver_id),
          UpdateExpression: 'ADD wins :minus',
          ConditionExpression: 'wins > :zero',
          ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
        }),
      )
      .catch((error: unknown) => {
        if (!isConditionalFailure(error)) throw error;
      });
    await db().send(new DeleteCommand({ TableName: mainTableName(), Key: assignKey(planId, runsheetId) }));
    await publishEvent(`user.${claim.driver_id}`, 'runsheet.cancelled', {
      key,
      data: { planning_id: planId, runsheet_id: runsheetId, pair_id: claim.pair_id, reason },
    });
  }
  const group = await readGroup(planId, runsheetId);
  const pairs = await getAll<{ id: string; current_state: PairState }>(
    mainTableName(),
    groupPairIds(group, runsheetId).map((id) => pairKey(planId, id)),
    { ProjectionExpression: 'id, current_state', ConsistentRead: true },
  );
  for (const pair of pairs) {
    if (!isOpenPair(pair.current_state)) continue;
    await recordEvent(planId, pair.id, 'system_rejected', clock.nowIso(), { reason: 'runsheet_cancelled' }).catch(
      (error: unknown) => {
        if (!isDomainError(error, 'conflict')) throw error;
      },
    );
  }
  const data = { planning_id: planId, runsheet_id: runsheetId, reason };
  await publishEvent(`planning.${planId}`, 'runsheet.cancelled', { key, data });
  await publishPartnerEvent(planning.org_id, 'runsheet.cancelled', data, key);
  return runsheetSummary(planId, runsheetId);
}
