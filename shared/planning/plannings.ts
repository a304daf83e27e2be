/**
 * Plannings (P1–P4), and the change every write of one makes. The planning `PLANNING#<id> / PROFILE` holds the name,
 * counts, `version_seq`/`version_rev` and the job; its runsheets (`RUNSHEET#<id>`) and drivers (`DRIVER#<id>`) are
 * items of the same partition, so a planning of any size reads with one Query. Every change writes the profile on the
 * condition that `version_rev` is still the one it read and issues the next: of two concurrent writers exactly one
 * wins. Its members are planning-members.ts's (P5–P8), its job's record job-records.ts's (P10–P16), its stored
 * records and reads planning-records.ts's.
 */

import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Caller, seesAllOrganisations } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import {
  cancelledIndexes,
  db,
  isConditionalFailure,
  mainTableName,
  type TransactItem,
  transactWrite,
} from '#shared/db/client';
import {
  answerBytes,
  type PageRequest,
  queryMergedPage,
  queryPage,
  type RangeQuery,
  rangeCondition,
  rangeMeta,
} from '#shared/db/paging';
import { listingPartition, listingPartitions } from '#shared/db/shards';
import { conflict, forbidden } from '#shared/errors';
import { newSecret, recordUuid } from '#shared/ids';
import { planningStatuses } from '#shared/planning/dispatch-records';
import { planningKey } from '#shared/planning/keys';
import {
  type Planning,
  type PlanningJob,
  planningContents,
  type Runsheet,
  visiblePlanning,
} from '#shared/planning/planning-records';
import { JOB_DEFAULTS } from '#shared/planning/schemas';

const nextRev = (seq: number) => `${seq}-${newSecret(9)}`;

export type PlanningContents = Awaited<ReturnType<typeof planningContents>>;

/**
 * The planning as the API shows it (P2–P5, P7, P9): the spec's Planning, member by member, and the job's public
 * part. Never the stored item: its keys, `entity`, and the job's lease and bookkeeping stay in storage.
 */
export async function toPlanningView(planning: Planning, contents?: PlanningContents) {
  const [{ runsheets, drivers }, statusOf] = await Promise.all([
    contents ?? planningContents(planning.id),
    planningStatuses(planning.id),
  ]);
  return {
    id: planning.id,
    org_id: planning.org_id,
    name: planning.name,
    version_seq: planning.version_seq,
    version_rev: planning.version_rev,
    total_runsheets: planning.total_runsheets,
    total_drivers: planning.total_drivers,
    created_at: planning.created_at,
    last_executed_at_client_time_utc: planning.last_executed_at_client_time_utc,
    last_executed_at_client_timezone: planning.last_executed_at_client_timezone,
    last_executed_at_server_time: planning.last_executed_at_server_time,
    runsheets: runsheets.map((runsheet) => ({ ...toRunsheetView(runsheet), ...statusOf(runsheet.id) })),
    // The spec's drivers are `{id}` (their names travel on the pair records).
    drivers: drivers.map((driver) => ({ id: driver.id })),
    ...(planning.job ? { job: toJobView(planning.job) } : {}),
    server_time: clock.nowIso(),
  };
}

/** What P3 adds to each runsheet beside what it holds (its dispatch status, at its longest), and to the planning. */
const STATUS_BYTES_PER_RUNSHEET = 600;
const PROFILE_BYTES = 64_000;

/** P3's answer in bytes with these runsheets and drivers, at its longest (route planning judges a result by it). */
export function planningBytes(runsheets: Runsheet[], drivers: { id: string }[]): number {
  let bytes = PROFILE_BYTES;
  for (const runsheet of runsheets) bytes += answerBytes(toRunsheetView(runsheet)) + STATUS_BYTES_PER_RUNSHEET;
  for (const driver of drivers) bytes += answerBytes({ id: driver.id });
  return bytes;
}

const toRunsheetView = (runsheet: Runsheet) => ({
  id: runsheet.id,
  ...(runsheet.name !== undefined ? { name: runsheet.name } : {}),
  ...(runsheet.service_type !== undefined ? { service_type: runsheet.service_type } : {}),
  tasks: runsheet.tasks,
  ...(runsheet.stops !== undefined ? { stops: runsheet.stops } : {}),
});

/** The job inside a planning view: its machine and settings, not its lease (`lease_owner`, `lease_until`). */
const toJobView = (job: PlanningJob) => ({
  id: job.id,
  current_status: job.current_status,
  statuses: job.statuses,
  status_updated_at: job.status_updated_at,
  max_candidates: job.max_candidates,
  offer_ttl_s: job.offer_ttl_s,
  max_waves: job.max_waves ?? JOB_DEFAULTS.max_waves,
  max_runsheets_per_driver: job.max_runsheets_per_driver ?? JOB_DEFAULTS.max_runsheets_per_driver,
  max_location_age_s: job.max_location_age_s ?? JOB_DEFAULTS.max_location_age_s,
});

/** The list view holds exactly these (spec section 2: "The list view of a planning holds only …"). */
export const listView = (p: Planning) => ({
  id: p.id,
  name: p.name,
  total_runsheets: p.total_runsheets,
  total_drivers: p.total_drivers,
  version_rev: p.version_rev,
});

/** P2. */
export async function createPlanning(caller: Caller, name: string) {
  if (!caller.orgId) throw forbidden('a planning belongs to an organisation; your account has none');
  const now = clock.nowIso();
  const planning: Planning = {
    id: recordUuid(),
    org_id: caller.orgId,
    name,
    version_seq: 1,
    version_rev: nextRev(1),
    total_runsheets: 0,
    total_drivers: 0,
    created_at: now,
    last_executed_at_client_time_utc: null,
    last_executed_at_client_timezone: null,
    last_executed_at_server_time: null,
    job: null,
  };
  const sort = `${now}#${planning.id}`;
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: {
        ...planningKey(planning.id),
        GSI1PK: `ORG#${planning.org_id}#PLANNINGS`,
        GSI1SK: sort,
        GSI2PK: listingPartition('PLANNINGS', planning.id),
        GSI2SK: sort,
        entity: 'planning',
        ...planning,
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
  return toPlanningView(planning);
}

/** P1. */
export async function listPlannings(caller: Caller, range: RangeQuery, page: PageRequest, orgId?: string) {
  if (orgId && !seesAllOrganisations(caller) && orgId !== caller.orgId) {
    throw forbidden('org_id names another organisation');
  }
  const [index, partition] = orgId
    ? (['GSI1', `ORG#${orgId}#PLANNINGS`] as const)
    : seesAllOrganisations(caller)
      ? (['GSI2', 'PLANNINGS'] as const)
      : caller.orgId
        ? (['GSI1', `ORG#${caller.orgId}#PLANNINGS`] as const)
        : (() => {
            throw forbidden('your account belongs to no organisation');
          })();
  const input = { TableName: mainTableName(), IndexName: index, ...rangeCondition(index, partition, range) };
  const listed = (item: Record<string, unknown>) => listView(item as unknown as Planning);
  const found =
    partition === 'PLANNINGS'
      ? await queryMergedPage(listingPartitions(partition), input, page, listed)
      : await queryPage(input, page, listed);
  return { meta: { ...rangeMeta(range), ...found.meta }, plannings: found.items };
}

/**
 * Changes the planning: `changes` to the profile plus `extra` items, in one transaction conditional on the version
 * read (`expectedRev`, when the caller sent one, must be it: else 409 stale).
 */
export async function changePlanning(
  planning: Planning,
  expectedRev: string | undefined,
  changes: Partial<Planning>,
  extra: TransactItem[] = [],
): Promise<Planning> {
  if (expectedRev !== undefined && expectedRev !== planning.version_rev) {
    throw conflict('version_rev is stale: read the planning again and retry');
  }
  try {
    return await writeChange(planning, changes, extra);
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    if (extra.length === 0 || cancelledIndexes(error).includes(0))
      throw conflict('version_rev is stale: the planning changed meanwhile');
    throw conflict('the change conflicts with the planning as it is now');
  }
}

/** The write of `changePlanning`, conditional on the version read; a failed condition is thrown as DynamoDB threw it. */
export async function writeChange(
  planning: Planning,
  changes: Partial<Planning>,
  extra: TransactItem[],
): Promise<Planning> {
  const seq = planning.version_seq + 1;
  const after: Planning = { ...planning, ...changes, version_seq: seq, version_rev: nextRev(seq) };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':before': planning.version_rev };
  const sets = Object.entries({ ...changes, version_seq: seq, version_rev: after.version_rev }).map(
    ([key, value], i) => {
      names[`#f${i}`] = key;
      values[`:v${i}`] = value;
      return `#f${i} = :v${i}`;
    },
  );
  const update = {
    TableName: mainTableName(),
    Key: planningKey(planning.id),
    UpdateExpression: `SET ${sets.join(', ')}`,
    ConditionExpression: 'version_rev = :before',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
  // A transaction doubles every unit: only a change with other items takes one.
  if (extra.length === 0) await db().send(new UpdateCommand(update));
  else await transactWrite([{ Update: update }, ...extra]);
  return after;
}

/** P4. */
export async function renamePlanning(caller: Caller, id: string, name: string, versionRev: string) {
  return toPlanningView(await changePlanning(await visiblePlanning(caller, id), versionRev, { name }));
}
