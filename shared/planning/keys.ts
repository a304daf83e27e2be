/** Keys of a planning record, shared by the planning area and the channels that name a planning. */
export const planningKey = (id: string) => ({ PK: `PLANNING#${id}`, SK: 'PROFILE' });

/** A broadcast pair record. */
export const pairKey = (planId: string, pairId: string) => ({ PK: `BPLAN#${planId}`, SK: `PAIR#${pairId}` });

/** A runsheet's offer group: the ids of every pair it was offered in (`pair_ids`). */
export const groupKey = (planId: string, runsheetId: string) => ({
  PK: `BPLAN#${planId}`,
  SK: `RSPAIRS#${runsheetId}`,
});
