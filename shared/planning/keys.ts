import { createHash } from 'node:crypto';

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

/** A broadcast pair record. */
export const pairKey = (planId: string, pairId: string) => ({ PK: `BPLAN#${planId}`, SK: `PAIR#${pairId}` });

/** A runsheet's offer group: the ids of every pair it was offered in (`pair_ids`). */
export const groupKey = (planId: string, runsheetId: string) => ({
  PK: `BPLAN#${planId}`,
  SK: `RSPAIRS#${runsheetId}`,
});

/** A runsheet's claim: who won it (R6, X16). Its condition keeps two winners out. */
export const assignKey = (planId: string, runsheetId: string) => ({
  PK: `BPLAN#${planId}`,
  SK: `ASSIGN#${runsheetId}`,
});

/** How many runsheets of the planning a driver holds (`wins`): the accept's condition keeps it within the limit. */
export const winsKey = (planId: string, driverId: string) => ({ PK: `BPLAN#${planId}`, SK: `WINS#${driverId}` });

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
  PK: `BPLAN#${planId}`,
  SK: `PROGRESS#${encodeURIComponent(runsheetId)}#${encodeURIComponent(taskId)}`,
});

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

/** A planning's id from its records' partition key (`BPLAN#<plan>`), the inverse of the keys above. */
export const planIdOf = (pk: unknown) => String(pk).slice('BPLAN#'.length);
/** A runsheet's id from its offer group's sort key (`RSPAIRS#<runsheet>`), the inverse of `groupKey`. */
export const groupRunsheetIdOf = (sk: unknown) => String(sk).slice('RSPAIRS#'.length);
