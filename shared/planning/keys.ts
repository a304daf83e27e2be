/** Keys of a planning record, shared by the planning area and the channels that name a planning. */
export const planningKey = (id: string) => ({ PK: `PLANNING#${id}`, SK: 'PROFILE' });

/** One of a planning's runsheets, an item of the planning's partition. */
export const runsheetKey = (planId: string, runsheetId: string) => ({
  PK: `PLANNING#${planId}`,
  SK: `RUNSHEET#${runsheetId}`,
});

/** A broadcast pair record. */
export const pairKey = (planId: string, pairId: string) => ({ PK: `BPLAN#${planId}`, SK: `PAIR#${pairId}` });

/** A runsheet's offer group: the ids of every pair it was offered in (`pair_ids`). */
export const groupKey = (planId: string, runsheetId: string) => ({
  PK: `BPLAN#${planId}`,
  SK: `RSPAIRS#${runsheetId}`,
});
