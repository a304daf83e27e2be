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
