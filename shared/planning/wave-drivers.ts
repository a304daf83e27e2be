/**
 * Who a wave may ask: the facts eligibility judges (shared/planning/eligibility.ts) read for a planning's drivers
 * (duty, service types, current fixes, runsheets won: `driverFacts`), and X17's cheaper read of only the drivers near
 * its runsheet (the geo index, `WaveDrivers.nearest`) or of every driver of a small planning (`EVERY_DRIVER_MAX`).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dutyOf, type UserRecord, userKey } from '#shared/accounts/users';
import { clock } from '#shared/clock';
import { db, getAll, mainTableName, queryAll } from '#shared/db/client';
import { notFound } from '#shared/errors';
import { currentFixes } from '#shared/locations/positions';
import { driversIndexedNear } from '#shared/locations/search';
import { type DriverFacts, type EligibilityParameters, eligibleDrivers } from '#shared/planning/eligibility';
import { planningDriverKey, runsheetKey, winsKey, winsPartition } from '#shared/planning/keys';
import { findPlanning, type Planning, planningContents } from '#shared/planning/planning-records';
import { JOB_DEFAULTS } from '#shared/planning/schemas';

/** How old the wave worker's copy of the drivers' runsheet counts may be when it chooses a wave's drivers. */
const WINS_FRESH_MS = 1_000;

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
export async function runsheetsWonBy(planId: string, driverIds: string[]): Promise<Map<string, number>> {
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

export const withOffered = (
  facts: JudgeContext['facts'],
  offeredTo: ReadonlySet<string>,
  runsheetId: string,
): DriverFacts[] =>
  facts.map((f) => ({ ...f, offered: offeredTo.has(f.id) ? new Set([runsheetId]) : new Set<string>() }));

/**
 * A judgement's reads of its planning: the planning, its runsheets and its drivers' facts, read once when first
 * needed, or X17's of its one runsheet and the drivers near it (`nearest`). The wave worker's `WaveJudge`
 * (shared/planning/waves.ts) is one.
 */
export class WaveDrivers {
  private context?: Promise<JudgeContext>;

  /** X17's reads of its one runsheet and the drivers near it, when they sufficed. */
  protected near?: JudgeContext;

  /** The drivers' counts of won runsheets, read again when older than WINS_FRESH_MS (drivers win all along a sweep). */
  private wins?: { at: number; read: Promise<Map<string, number>> };

  constructor(
    protected readonly planId: string,
    protected readonly oneRunsheet = false,
  ) {}

  /**
   * The facts with the drivers' current counts of runsheets: a sweep that works through a big day for seconds would
   * otherwise offer runsheets to drivers who have won their last one since it began (closed at once after the send,
   * `closeAtCapacity`, but an offer the driver's app shows for a moment).
   */
  protected async currentFacts() {
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
  protected async nearest(
    runsheetId: string,
    offeredTo: ReadonlySet<string>,
    asked: number | undefined,
    nowMs: number,
  ) {
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

  protected load() {
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
}
