import { createHash } from 'node:crypto';
import { orgSweepPartition, shardOf } from '#shared/db/shards';

/** Keys of a planning record, shared by the planning area and the channels that name a planning. */
export const planningKey = (id: string) => ({ PK: `PLANNING#${id}`, SK: 'PROFILE' });

/** One of a planning's runsheets, an item of the planning's partition. */
export const runsheetKey = (planId: string, runsheetId: string) => ({
  PK: `PLANNING#${planId}`,
  SK: `RUNSHEET#${runsheetId}`,
});

/** One of a planning's drivers (P7), an item of the planning's partition. */
export const planningDriverKey = (planId: string, driverId: string) => ({
  PK: `PLANNING#${planId}`,
  SK: `DRIVER#${driverId}`,
});

/**
 * A planning's dispatch records (pairs, offer groups, claims, counts, progress) are spread over `PLAN_SHARDS`
 * partition keys, `BPLAN#<plan>#<n>` (issue 45, docs/indexes.md "Shards"): one key takes 1 000 WCU/s, and a big
 * planning's job writes thousands of pairs in seconds. A record's shard follows from its own id (a pair's from the
 * pair id, a runsheet's records from the runsheet id, a count from the driver id), so every write and GetItem names
 * its key; a read of all of a planning's records of a kind is one Query a shard, run at once.
 */
export const PLAN_SHARDS = 8;
const planPartition = (planId: string, shard: number) => `BPLAN#${planId}#${shard}`;
/** Every partition key of a planning's dispatch records, in order (a pair listing walks them in this order). */
export const planPartitions = (planId: string) =>
  Array.from({ length: PLAN_SHARDS }, (_, n) => planPartition(planId, n));
/**
 * A pair's shard: its id's first hex digit, so that walking the shards in order lists the pairs in id order (R2's
 * order, as when they shared one key); an id that does not start with one (R3's are the caller's) by its hash.
 */
function pairShard(pairId: string): number {
  const digit = Number.parseInt(pairId.charAt(0), 16);
  return Number.isNaN(digit) ? shardOf(pairId, PLAN_SHARDS) : Math.floor((digit * PLAN_SHARDS) / 16);
}
/** The shard of a runsheet's records (its group, claim and task progress), or of a driver's count. */
const idShard = (id: string) => shardOf(id, PLAN_SHARDS);

/** A broadcast pair record. */
export const pairKey = (planId: string, pairId: string) => ({
  PK: planPartition(planId, pairShard(pairId)),
  SK: `PAIR#${pairId}`,
});

/** A runsheet's offer group: its dispatch record, naming every pair it was offered in (planning/offer-groups.ts). */
export const groupKey = (planId: string, runsheetId: string) => ({
  PK: planPartition(planId, idShard(runsheetId)),
  SK: `RSPAIRS#${runsheetId}`,
});

/** A runsheet's claim: who won it (R6, X16). Its condition keeps two winners out. */
export const assignKey = (planId: string, runsheetId: string) => ({
  PK: planPartition(planId, idShard(runsheetId)),
  SK: `ASSIGN#${runsheetId}`,
});

/**
 * How many runsheets of the planning a driver holds (`wins`): the accept's condition keeps it within the limit. The
 * counts stay together in the planning's first shard: each wave reads them all (one Query), and they are written
 * once an accept or a give-back, a rate the planning's answers set, not its job.
 */
export const winsKey = (planId: string, driverId: string) => ({
  PK: planPartition(planId, 0),
  SK: `WINS#${driverId}`,
});
/** The partition of a planning's drivers' counts (`winsKey`). */
export const winsPartition = (planId: string) => planPartition(planId, 0);

/** The plan's offer watch (one item a planning: the expiry sweep's entry for the job's pairs). */
export const watchKey = (planId: string) => ({ PK: planPartition(planId, 0), SK: 'OFFERS' });
/** The planning's registration in the wave worker's registry (shared/planning/wave-plans.ts). */
export const waveWatchKey = (planId: string) => ({ PK: planPartition(planId, 0), SK: 'WAVES' });

/** A pair's id follows from the job (and wave), the runsheet and the driver, so a rerun finds the pairs it wrote. */
export function pairIdOf(jobId: string, runsheetId: string, driverId: string): string {
  const hex = createHash('sha256').update(`${jobId}\u0000${runsheetId}\u0000${driverId}`).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 3) | 8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * A task's progress in a runsheet (contract 4.8): its status and timeline. The ids are encoded so that no runsheet and
 * task id pair can name another's item (ids may hold `#`).
 */
export const progressKey = (planId: string, runsheetId: string, taskId: string) => ({
  PK: planPartition(planId, idShard(runsheetId)),
  SK: `${progressPrefix(runsheetId)}${encodeURIComponent(taskId)}`,
});

/** The start of a runsheet's task progress keys in its shard (`progressKey`): one Query reads them all. */
export const progressPrefix = (runsheetId: string) => `PROGRESS#${encodeURIComponent(runsheetId)}#`;

/**
 * The clock check's work list (shared/planning/late-risk.ts): a runsheet's claim is listed in the sweep index (GSI3
 * `LIVE#<org>`, its planning's organisation) from the win until its last task finishes (a cancel or a give-back
 * deletes the claim, and its entry with it), so the list holds the runsheets under way and nothing else. The sort
 * key names the driver, whose last fix the check starts from.
 */
export const LIVE_RUNSHEETS = 'LIVE';
export const liveRunsheetKeys = (orgId: string, driverId: string, runsheetId: string) => ({
  GSI3PK: orgSweepPartition(LIVE_RUNSHEETS, orgId),
  GSI3SK: `${driverId}#${encodeURIComponent(runsheetId)}`,
});
/** The driver's id from a `liveRunsheetKeys` sort key. */
export const liveDriverOf = (sk: unknown) => String(sk).split('#')[0] ?? '';

/** A proof a driver declared (X21): who, what type and size, where its object is. */
export const proofKey = (proofId: string) => ({ PK: `PROOF#${proofId}`, SK: 'PROOF' });
/** A driver's proofs not yet named by an event (`open`: proof id → declared at, ms): X21's quota. */
export const openProofsKey = (driverId: string) => ({ PK: `DRIVER#${driverId}#PROOFS`, SK: 'OPEN' });

/**
 * The index entry (GSI1) of a runsheet's claim in its driver's list: the driver's app names a runsheet by its id
 * alone (X20), which is unique only within its planning; the entry's keys say which planning holds it.
 */
export const driverRunsheetKeys = (driverId: string, runsheetId: string, planId: string) => ({
  GSI1PK: driverRunsheetsPartition(driverId),
  GSI1SK: `${driverRunsheetPrefix(runsheetId)}${planId}`,
});
/**
 * The driver's list of runsheets in GSI1 (assigned or in progress), and the start of one runsheet id's entries in it
 * (any planning). A claim moves to the driver's list of completed runsheets when its last task finishes, so the list
 * of runsheets under way stays as short as the driver's day (X21 asks it whether the driver holds one).
 */
export const driverRunsheetsPartition = (driverId: string) => `DRIVER#${driverId}#RUNSHEETS`;
export const driverCompletedRunsheetsPartition = (driverId: string) => `DRIVER#${driverId}#RUNSHEETS#DONE`;
export const driverRunsheetPrefix = (runsheetId: string) => `${encodeURIComponent(runsheetId)}#`;

/** A planning's id from its records' partition key (`BPLAN#<plan>#<shard>`), the inverse of the keys above. */
export const planIdOf = (pk: unknown) => String(pk).split('#')[1] ?? '';
/** A runsheet's id from its offer group's sort key (`RSPAIRS#<runsheet>`), the inverse of `groupKey`. */
export const groupRunsheetIdOf = (sk: unknown) => String(sk).slice('RSPAIRS#'.length);
