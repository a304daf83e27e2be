/**
 * A runsheet's dispatch records and the status every reader sees (contract 4.7).
 *
 * A runsheet's offer group (`BPLAN#<plan>#<n> / RSPAIRS#<runsheet>`) is its dispatch record: it holds the drivers ever
 * offered it by wave (`offered`, which with `job_id` names their pairs: shared/planning/offer-groups.ts), the last wave
 * sent (`wave`) and how many may be (`waves_allowed`), how many offers are open and the soonest expiry (`open`), and,
 * once the service stops, `unassigned` (the reason) or `cancelled`. Who won it
 * is the claim `ASSIGN#<runsheet>` that the accept writes in its transaction; a driver's count of the planning's
 * runsheets is `WINS#<driver>`. The status every reader sees (`runsheetStatus`) follows from those two items alone.
 *
 * Read here for X14's list (`listRunsheets`), a runsheet's or a planning's statuses and the job's counts
 * (`dispatchCounts`); the wave worker (shared/planning/waves.ts) and the dispatcher's moves
 * (shared/planning/dispatch.ts) write them.
 */
import type { Caller } from '#shared/auth/caller';
import { getAll, mainTableName } from '#shared/db/client';
import { type PageRequest, queryPage } from '#shared/db/paging';
import { queryPartitions } from '#shared/db/shards';
import type { UnassignedReason } from '#shared/planning/eligibility';
import {
  assignKey,
  groupKey,
  groupRunsheetIdOf,
  PLAN_SHARDS,
  planPartitions,
  runsheetKey,
} from '#shared/planning/keys';
import { groupPairIds, type OfferListing, type OpenOffers } from '#shared/planning/offer-groups';
import { visiblePlanning } from '#shared/planning/planning-records';

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
