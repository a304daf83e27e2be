/**
 * Keys of route planning's records (contract 4.10), all in one place. A planning's builds are a partition of their
 * own (`ROUTES#<planning>`), so that reading a planning (its `PLANNING#` partition) never reads a build; X25 lists
 * them newest first with one Query of a list partition of their own (`buildListKey`). A build's result is a
 * partition of its own.
 */

export const buildsPartition = (planningId: string) => `ROUTES#${planningId}`;

/** A build: its request, status, lease, progress and (once completed) its result's summary. */
export const buildKey = (planningId: string, buildId: string) => ({
  PK: buildsPartition(planningId),
  SK: `BUILD#${buildId}`,
});

/** The start of every build's sort key. */
export const BUILD_PREFIX = 'BUILD#';

/**
 * What a build keeps apart from its record, in the same partition, so that the record stays about 1 KB and each of
 * its updates (claim, result noted, end) costs a unit or two: its task ids, packed (written once, by X23), and its
 * progress while solving (rewritten every 2 s by the worker, read by X24).
 */
export const buildTasksKey = (planningId: string, buildId: string) => ({
  PK: buildsPartition(planningId),
  SK: `BUILD#${buildId}#TASKS`,
});
export const buildProgressKey = (planningId: string, buildId: string) => ({
  PK: buildsPartition(planningId),
  SK: `BUILD#${buildId}#PROGRESS`,
});

/** A build's entry in its planning's list (X25): a small item of what X25 shows, by creation time. */
export const buildListKey = (planningId: string, createdAt: string, buildId: string) => ({
  PK: buildListPartition(planningId),
  SK: `${createdAt}#${buildId}`,
});
export const buildListPartition = (planningId: string) => `ROUTES#${planningId}#BUILDS`;

/**
 * One part of a build's result: a result of 2 000 tasks is larger than one DynamoDB item (400 KB), so its JSON is
 * stored in parts of at most `RESULT_PART_CHARS`, read back with one Query.
 */
export const resultPartKey = (buildId: string, part: number) => ({
  PK: resultPartition(buildId),
  SK: `PART#${String(part).padStart(4, '0')}`,
});
export const resultPartition = (buildId: string) => `ROUTERESULT#${buildId}`;

/** A build's id from its sort key (`BUILD#<id>`), the inverse of `buildKey`. */
export const buildIdOf = (sk: unknown) => String(sk).slice(BUILD_PREFIX.length);
/** A build's planning from its partition key (`ROUTES#<planning>`), the inverse of `buildsPartition`. */
export const buildPlanningOf = (pk: unknown) => String(pk).slice('ROUTES#'.length);

/**
 * The id of the runsheet a build makes for its `n`-th vehicle used: it follows from the build and the vehicle, so a
 * retried worker writes the same runsheets again, never new ones.
 */
export const builtRunsheetId = (buildId: string, vehicleId: string) => `${vehicleId}-${buildId.slice(-8)}`;
