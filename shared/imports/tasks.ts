/**
 * Imported tasks (X10, X11) and their place in a planning (P5 `task_ids`, P6).
 *
 * Layout: a task is `TASK#<id> / TASK`, its items `TASK#<id> / ITEM#<row>` in the same partition, so X11 is one
 * Query. The id is derived from the job and the task_ref (`taskId`), so a rerun of the import rewrites the same
 * items. Every task carries two read-through index entries, written by the import worker in the same put:
 *   - GSI1 `ORG#<org>#TASKS`, sorted `<job created_at>#<import job id>#<row>`: every task of the organisation;
 *   - GSI2 `ORG#<org>#TASKS#planned|unplanned`, the same sort key: the tasks in (or out of) a runsheet.
 * Both list newest job first (`desc`) or oldest first in file order (`asc`); `import_job_id` narrows either to one
 * job with `begins_with` on the sort key (the job read first for its `created_at`). No Scan, no filter.
 *
 * P5 reads every task it names before it marks any (`checkClaims`: BatchGetItem, 100 keys a call), so a refused call
 * writes nothing; X23 reads them so too, eventually consistent (its build claims each task again when it applies),
 * or an import job's from the indexes (`checkJobClaims`). Planning a task is then one conditional UpdateItem on the task (`claimTask`): it sets
 * `planning_id`/`runsheet_id` and moves its GSI2 entry, only while the task is free, so of two P5 calls that name the
 * same task concurrently exactly one wins; the other is a 409.
 */
import { createHash } from 'node:crypto';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Caller, seesAllOrganisations } from '#shared/auth/caller';
import { db, getAll, isConditionalFailure, mainTableName, queryAll } from '#shared/db/client';
import { type PageRequest, queryPage } from '#shared/db/paging';
import { conflict, type DomainError, forbidden, invalidAt, notFound } from '#shared/errors';
import { findJob, jobKey } from '#shared/imports/jobs';
import { progressKey } from '#shared/planning/keys';

/** A task's id: 24 hex characters derived from its job and task_ref (a rerun writes the same task). */
export const taskId = (jobId: string, ref: string): string =>
  createHash('sha256').update([jobId, ref].join('\u0000')).digest('hex').slice(0, 24);

export const taskKey = (id: string) => ({ PK: `TASK#${id}`, SK: 'TASK' });
/** The task's id, from its table key (as a keys-only index entry carries it). */
export const taskIdOf = (key: { PK: string }) => key.PK.slice('TASK#'.length);
export const taskItemKey = (id: string, row: number) => ({
  PK: `TASK#${id}`,
  SK: `ITEM#${String(row).padStart(6, '0')}`,
});

const orgTasks = (orgId: string) => `ORG#${orgId}#TASKS`;
const plannedTasks = (orgId: string, planned: boolean) => `${orgTasks(orgId)}#${planned ? 'planned' : 'unplanned'}`;
/**
 * A job's tasks sort by when the job was created, then in file order: job ids carry only whole seconds (and none at
 * all when derived from an Idempotency-Key), so two jobs of one second would otherwise list in random order.
 */
const jobTasks = (job: { id: string; created_at: string }) => `${job.created_at}#${job.id}#`;
const taskSort = (job: { id: string; created_at: string }, row: number) =>
  `${jobTasks(job)}${String(row).padStart(6, '0')}`;

/** Where one job's tasks sit in X10's two indexes: the partition of each and the sort-key prefix of the job. */
export const jobTaskRanges = (orgId: string, job: { id: string; created_at: string }) =>
  [
    { index: 'GSI1', partition: orgTasks(orgId), prefix: jobTasks(job) },
    { index: 'GSI2', partition: plannedTasks(orgId, false), prefix: jobTasks(job) },
  ] as const;

/** The index attributes an imported task is written with (the import worker adds them to its put). */
export const taskIndexKeys = (orgId: string, job: { id: string; created_at: string }, row: number) => ({
  GSI1PK: orgTasks(orgId),
  GSI1SK: taskSort(job, row),
  GSI2PK: plannedTasks(orgId, false),
  GSI2SK: taskSort(job, row),
});

type Stored = Record<string, unknown>;

const TASK_MEMBERS = [
  'id',
  'task_ref',
  'import_job_id',
  'from_address',
  'to_address',
  'from_time_window',
  'to_time_window',
  'total_item_weight',
  'total_weight_unit',
  'total_item_volume',
  'total_volume_unit',
  'total_item_count',
  'client_time_utc',
  'client_timezone',
  'notes',
  'from_service_s',
  'to_service_s',
  'created_at',
] as const;

/** The task as imported: the spec's Task plus task_ref, import_job_id and notes. Never a key or bookkeeping. */
export function importedTask(item: Stored): Record<string, unknown> {
  const task: Record<string, unknown> = {};
  for (const member of TASK_MEMBERS) task[member] = item[member] ?? null;
  return task;
}

const NO_MEMBERS: Record<string, null> = Object.fromEntries(TASK_MEMBERS.map((member) => [member, null]));
/** An imported address's members (`parseTask`), null when the file leaves them empty; its coordinates are optional. */
const NO_ADDRESS: Record<string, null> = Object.fromEntries(
  ['building_name', 'street_address', 'city', 'state', 'country', 'zip_code'].map((member) => [member, null]),
);
const ADDRESSES = ['from_address', 'to_address'];

/** `value` without the members of `template` that are null in it. */
const withoutNulls = (value: Record<string, unknown>, template: Record<string, null>) =>
  Object.fromEntries(Object.entries(value).filter(([member, v]) => !(v === null && Object.hasOwn(template, member))));
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * An imported task as a runsheet item stores its copy: without the members `importedTask` sets to null, its addresses'
 * included (a task of the CSV's required columns alone has nine, and three in each address: some 205 bytes, 41 KB a
 * runsheet of 200 tasks, 41 WCU each time it is written). Other members (a built runsheet's planned times) are kept as they are.
 */
export function storedTaskCopy(task: Record<string, unknown>): Record<string, unknown> {
  const copy = withoutNulls(task, NO_MEMBERS);
  for (const address of ADDRESSES) {
    const value = copy[address];
    if (isRecord(value)) copy[address] = withoutNulls(value, NO_ADDRESS);
  }
  return copy;
}

/** A stored copy read back (`storedTaskCopy`'s inverse): every member of `importedTask`, in its order, then the rest. */
export function taskFromCopy(copy: Record<string, unknown>): Record<string, unknown> {
  const task: Record<string, unknown> = { ...NO_MEMBERS, ...copy };
  for (const address of ADDRESSES) {
    const value = task[address];
    if (isRecord(value)) task[address] = { ...NO_ADDRESS, ...value };
  }
  return task;
}

type Progress = { status: string; timeline: unknown[] };
const PENDING: Progress = { status: 'pending', timeline: [] };

/**
 * Contract 4.8: the progress of the tasks of a page that are in a runsheet (one batched read of their progress items,
 * planning/execution.ts writes them): `status` and `timeline`; a task in no runsheet or not reported yet is `pending`.
 */
async function progressOf(items: Stored[]) {
  const placed = items.filter((item) => item['planning_id'] && item['runsheet_id']);
  const key = (item: Stored) =>
    progressKey(String(item['planning_id']), String(item['runsheet_id']), String(item['id']));
  const found = await getAll<Progress & Stored>(mainTableName(), placed.map(key));
  const byKey = new Map(found.map((p) => [`${p['PK']}\u0000${p['SK']}`, p]));
  return (item: Stored): Progress => {
    if (!item['planning_id'] || !item['runsheet_id']) return PENDING;
    const k = key(item);
    const progress = byKey.get(`${k.PK}\u0000${k.SK}`);
    return progress ? { status: progress.status, timeline: progress.timeline } : PENDING;
  };
}

/** X10's entry: the task as imported and where it is planned (null when in no runsheet). */
export const listedTask = (item: Stored) => ({
  ...importedTask(item),
  planning_id: (item['planning_id'] as string | undefined) ?? null,
  runsheet_id: (item['runsheet_id'] as string | undefined) ?? null,
});

const itemView = (item: Stored) => ({
  id: item['id'] as string,
  sku: (item['sku'] as string | null | undefined) ?? null,
  description: item['description'] as string,
  quantity: item['quantity'] as number,
  weight: (item['weight'] as number | null | undefined) ?? null,
  weight_unit: (item['weight_unit'] as string | null | undefined) ?? null,
  volume: (item['volume'] as number | null | undefined) ?? null,
  volume_unit: (item['volume_unit'] as string | null | undefined) ?? null,
});

/** The organisation a caller reads tasks of: its own; SysAdmin (and internal clients) name one with `org_id`. */
function tasksOrg(caller: Caller, orgId: string | undefined): string {
  if (seesAllOrganisations(caller)) {
    if (!orgId) throw invalidAt('query.org_id', 'is required: name the organisation whose tasks to list');
    return orgId;
  }
  if (!caller.orgId) throw forbidden('your account belongs to no organisation');
  if (orgId && orgId !== caller.orgId) throw forbidden('org_id names another organisation');
  return caller.orgId;
}

export interface TaskFilter {
  orgId?: string | undefined;
  importJobId?: string | undefined;
  planned?: boolean | undefined;
  order: 'asc' | 'desc';
}

/** X10: one Query a page on GSI1 (every task) or GSI2 (planned or not), narrowed to a job by its sort-key prefix. */
export async function listTasks(caller: Caller, filter: TaskFilter, page: PageRequest) {
  const org = tasksOrg(caller, filter.orgId);
  // One job's tasks: the prefix of its sort keys. An unknown job's id alone is a prefix no key has (keys begin with
  // a time): an empty list, as for another organisation's job, whose tasks are in another partition anyway.
  const job = filter.importJobId ? await findJob(filter.importJobId) : undefined;
  const prefix = job ? jobTasks(job) : `${filter.importJobId}#`;
  const [index, partition] =
    filter.planned === undefined
      ? (['GSI1', orgTasks(org)] as const)
      : (['GSI2', plannedTasks(org, filter.planned)] as const);
  const found = await queryPage(
    {
      TableName: mainTableName(),
      IndexName: index,
      KeyConditionExpression: filter.importJobId ? '#pk = :pk AND begins_with(#sk, :job)' : '#pk = :pk',
      ExpressionAttributeNames: { '#pk': `${index}PK`, ...(filter.importJobId ? { '#sk': `${index}SK` } : {}) },
      ExpressionAttributeValues: {
        ':pk': partition,
        ...(filter.importJobId ? { ':job': prefix } : {}),
      },
      ScanIndexForward: filter.order === 'asc',
    },
    page,
    (item) => item,
  );
  const progress = await progressOf(found.items);
  return { tasks: found.items.map((item) => ({ ...listedTask(item), ...progress(item) })), meta: found.meta };
}

/** X11: the task and its items (one Query of its partition); another organisation's task is a 404. */
export async function readTask(caller: Caller, id: string) {
  const items = await queryAll({
    TableName: mainTableName(),
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': taskKey(id).PK },
  });
  const task = items.find((item) => item['SK'] === 'TASK');
  if (!task || !(seesAllOrganisations(caller) || (caller.orgId && task['org_id'] === caller.orgId))) {
    throw notFound('task');
  }
  const progress = await progressOf([task]);
  return {
    task: {
      ...listedTask(task),
      ...progress(task),
      items: items.filter((item) => String(item['SK']).startsWith('ITEM#')).map(itemView),
    },
  };
}

/** One task a P5 call names: which runsheet it goes into and the request path it was named at. */
export interface TaskClaim {
  runsheetId: string;
  taskId: string;
  path: string;
}

/** Keys a BatchGetItem reads at most: `checkClaims` reads the named tasks this many at a time, in request order. */
const READ_BATCH = 100;

/**
 * P5 checks every task it names before it marks any (contract 4.9), reading them 100 a BatchGetItem (consistently:
 * a claim or a release just made must be seen) and the import jobs of their tasks (each job once a call), in request
 * order; the first refusal in request order is thrown as soon as its batch is read, so a call whose first ids are
 * unknown costs one read of 100 keys:
 *   - an id that names no task of the organisation: 400 at its path;
 *   - a task of an import that has not completed: 409 at its path. Until then a worker that died may still retry the
 *     import, and a retry writes its tasks again as imported, which would drop a planned mark and let a second
 *     runsheet take the task. A completed (or failed) job is never run again;
 *   - a task in a runsheet of another planning, or in another runsheet of this one: 409 at its path.
 * Answers each named task as stored. Marking (`claimTask`) still decides a race: a task read free may be taken by a
 * concurrent call before this one marks it.
 */
export async function checkClaims(
  orgId: string,
  planningId: string,
  claims: readonly TaskClaim[],
  consistent = true,
): Promise<{ tasks: Map<string, Stored>; serviceTypeOf: Map<string, string | undefined> }> {
  const stored = new Map<string, Stored>();
  /** Each import job's status, read once for the call (a job absent from the table reads as `gone`). */
  const statusOf = new Map<string, string>();
  /** … and its `service_type` (contract 4.7: a runsheet of its tasks takes it), from the same read. */
  const serviceTypeOf = new Map<string, string | undefined>();
  const read = consistent ? { ConsistentRead: true } : {};
  for (let i = 0; i < claims.length; i += READ_BATCH) {
    const batch = claims.slice(i, i + READ_BATCH);
    const tasks = await getAll(
      mainTableName(),
      batch.map((claim) => taskKey(claim.taskId)),
      read,
    );
    const ours = tasks.filter((task) => task['entity'] === 'task' && task['org_id'] === orgId);
    const unread = [...new Set(ours.map((task) => String(task['import_job_id'])))].filter((job) => !statusOf.has(job));
    for (const job of unread) statusOf.set(job, 'gone');
    const jobs = await getAll(mainTableName(), unread.map(jobKey), {
      ...read,
      ProjectionExpression: 'id, current_status, details',
    });
    for (const job of jobs) {
      statusOf.set(job['id'] as string, job['current_status'] as string);
      serviceTypeOf.set(job['id'] as string, (job['details'] as { service_type?: string } | undefined)?.service_type);
    }
    for (const task of ours) stored.set(task['id'] as string, task);
    for (const claim of batch) refuseClaim(claim, stored.get(claim.taskId), statusOf, planningId);
  }
  return { tasks: stored, serviceTypeOf };
}

/** Throws the refusal of one named task (see `checkClaims`), if any. */
function refuseClaim(claim: TaskClaim, task: Stored | undefined, statusOf: Map<string, string>, planningId: string) {
  const { taskId, path } = claim;
  if (!task) throw invalidAt(path, "names no imported task of the planning's organisation");
  const job = String(task['import_job_id']);
  const unfinished = unfinishedJob(path, taskId, job, statusOf.get(job));
  if (unfinished) throw unfinished;
  if (task['planning_id'] !== undefined && !isInRunsheet(task, planningId, claim.runsheetId))
    throw alreadyPlanned(task, planningId, path);
}

/** The 409 for a task of an import that has not completed (or failed): a retry of it may write the task again. */
function unfinishedJob(path: string, taskId: string, job: string, status: string | undefined) {
  if (status === 'completed' || status === 'failed') return undefined;
  return conflict(
    `${path}: task ${taskId} belongs to import job ${job}, which is ${status}; plan it once the import has completed`,
    'conflict',
    [{ path, message: `its import job is ${status}` }],
  );
}

/**
 * An import job's tasks as X10's two indexes hold them, keys only (some 180 bytes an entry, charged by their summed
 * size: about 0.02 RCU a task, where reading a task is 0.5 or 1): every one in file order (GSI1), and the free ones
 * (GSI2's unplanned partition). Past `limit` tasks it stops reading and answers `over` alone.
 */
async function jobTaskEntries(
  orgId: string,
  job: { id: string; created_at: string },
  limit: number,
): Promise<{ over: true } | { over: false; ids: string[]; free: Set<string> }> {
  const [every, unplanned] = jobTaskRanges(orgId, job).map((range) => ({
    TableName: mainTableName(),
    IndexName: range.index,
    KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :job)',
    ExpressionAttributeNames: { '#pk': `${range.index}PK`, '#sk': `${range.index}SK` },
    ExpressionAttributeValues: { ':pk': range.partition, ':job': range.prefix },
    ProjectionExpression: 'PK',
  }));
  const ids: string[] = [];
  let cursor: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({ ...every!, Limit: limit + 1 - ids.length, ExclusiveStartKey: cursor }),
    );
    ids.push(...(out.Items ?? []).map((item) => taskIdOf(item as { PK: string })));
    cursor = out.LastEvaluatedKey;
  } while (cursor && ids.length <= limit);
  if (ids.length > limit) return { over: true };
  const free = await queryAll<{ PK: string }>(unplanned!);
  return { over: false, ids, free: new Set(free.map(taskIdOf)) };
}

/**
 * The first of `named` (in request order) that a job's index entries show taken (`jobTaskEntries`), with its refusal:
 * not free there, and marked when read whole (the index may lag a release: such a task is no refusal).
 */
async function firstPlanned(named: readonly TaskClaim[], free: Set<string>, planningId: string) {
  for (const claim of named.filter((c) => !free.has(c.taskId))) {
    const task = await storedTask(claim.taskId);
    if (task?.['planning_id'] !== undefined) return { claim, error: alreadyPlanned(task!, planningId, claim.path) };
  }
  return undefined;
}

/**
 * X23's check of an import job's tasks (contract 4.10: P5's refusals, at `path`), from the job's index entries
 * (`jobTaskEntries`) instead of the tasks. The indexes are eventually consistent: a task claimed a moment ago may
 * still read as free, and the build's apply, which claims each task conditionally, refuses it then (planning_changed);
 * one freed a moment ago may still be refused until the index has it. Answers the ids in file order; a job of more
 * than `limit` tasks is refused after reading `limit` + 1 entries.
 */
export async function checkJobClaims(
  orgId: string,
  planningId: string,
  job: { id: string; created_at: string; current_status: string },
  path: string,
  limit: number,
): Promise<string[]> {
  const entries = await jobTaskEntries(orgId, job, limit);
  if (entries.over)
    throw invalidAt(path, `has more than the ${limit} tasks one build may plan: name them with task_ids`);
  if (entries.ids.length === 0) throw invalidAt(path, 'has no imported tasks');
  const unfinished = unfinishedJob(path, entries.ids[0]!, job.id, job.current_status);
  if (unfinished) throw unfinished;
  const planned = await firstPlanned(
    entries.ids.map((taskId) => ({ runsheetId: '', taskId, path })),
    entries.free,
    planningId,
  );
  if (planned) throw planned.error;
  return entries.ids;
}

/** How many of a job's index entries X23 reads at most a task it names (`checkNamedClaims`). */
const ENTRIES_PER_NAMED_TASK = 10;

/**
 * X23's check of the tasks it names by id: P5's refusals (`checkClaims`), each at its path, the first in request
 * order, for a fraction of P5's reads. The tasks X23 names are most often one import's (X10 lists them by job): the
 * first job's index entries settle every named task of it (`settleByFirstJob`); the others are read eventually
 * consistent, half a unit each (the apply claims each task again, conditionally). 2 000 tasks of one job cost some
 * 80 RCU instead of 1 000; a job of more than ten tasks a named one is not read past that (its entries then cost at
 * most half what reading the named tasks does, and those are read).
 */
export async function checkNamedClaims(orgId: string, planningId: string, claims: readonly TaskClaim[], limit: number) {
  // A job's entries cost about a twentieth of what reading its tasks would (two entries a task, some 180 bytes each):
  // read no more of them than ten a named task, and read the tasks themselves past that.
  const { inJob, refusal } = await settleByFirstJob(
    orgId,
    planningId,
    claims,
    Math.min(limit, claims.length * ENTRIES_PER_NAMED_TASK),
  );
  // The others named before the job's first refusal (theirs would come first), or all of them when it has none.
  const before = claims.slice(0, refusal ? claims.indexOf(refusal.claim) : claims.length);
  await checkClaims(
    orgId,
    planningId,
    before.filter((claim) => !inJob.has(claim.taskId)),
    false,
  );
  if (refusal) throw refusal.error;
}

/**
 * The named tasks of the first named task's import job, settled from its index entries (`jobTaskEntries`): which they
 * are, and the first refusal among them (its job unfinished, or a task planned). None when the first names no task of
 * the organisation or its job has more than `limit` tasks.
 */
async function settleByFirstJob(orgId: string, planningId: string, claims: readonly TaskClaim[], limit: number) {
  const none = { inJob: new Set<string>(), refusal: undefined };
  const first = claims[0] && (await storedTask(claims[0].taskId, false));
  if (first?.['entity'] !== 'task' || first['org_id'] !== orgId) return none;
  const job = await findJob(String(first['import_job_id']));
  const entries = job && (await jobTaskEntries(orgId, job, limit));
  if (!job || !entries || entries.over) return none;
  const inJob = new Set(entries.ids);
  const named = claims.filter((claim) => inJob.has(claim.taskId));
  const unfinished = unfinishedJob(named[0]!.path, named[0]!.taskId, job.id, job.current_status);
  const refusal = unfinished
    ? { claim: named[0]!, error: unfinished }
    : await firstPlanned(named, entries.free, planningId);
  return { inJob, refusal };
}

/** Whether the stored task is marked as in `runsheetId` of `planningId`. */
export const isInRunsheet = (task: Stored, planningId: string, runsheetId: string) =>
  task['planning_id'] === planningId && task['runsheet_id'] === runsheetId;

/** The 409 for a task another runsheet holds, naming where. */
function alreadyPlanned(task: Stored, planningId: string, path: string): DomainError {
  const where =
    task['planning_id'] === planningId
      ? `runsheet ${String(task['runsheet_id'])} of this planning`
      : `a runsheet of planning ${String(task['planning_id'])}`;
  return conflict(`${path}: task ${String(task['id'])} is already in ${where}; remove it there first`, 'conflict', [
    { path, message: `is already in ${where}` },
  ]);
}

/**
 * P5: marks the task as in `runsheetId` of `planningId`, on the condition that it is a task of `orgId` and free (or
 * already in this very runsheet: a retry, or a runsheet replaced with the task kept). Answers the task as imported
 * and whether this call claimed it (false when it already was this runsheet's). A task that is not one of the
 * organisation's is a 400 at `path`; one in another runsheet a 409 at `path`.
 *
 * The task is answered from the item as written (ALL_NEW: the claim touches none of the task's own members), never
 * from its old image: a claim whose answer was lost after DynamoDB applied it is retried by the SDK and recognised as
 * ours (shared/db/client.ts ownRetriedWrites), which can give back the item as it stands but not as it was. An
 * ALL_OLD answer came back empty then, and the runsheet stored a task of nulls: no pickup, so the planning job
 * offered it to other drivers than on a day without faults.
 */
export async function claimTask(
  orgId: string,
  planningId: string,
  runsheetId: string,
  id: string,
  path: string,
): Promise<{ task: Record<string, unknown>; claimed: boolean }> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: taskKey(id),
        UpdateExpression: 'SET planning_id = :p, runsheet_id = :r, GSI2PK = :planned',
        ConditionExpression: 'org_id = :org AND entity = :task AND attribute_not_exists(planning_id)',
        ExpressionAttributeValues: {
          ':p': planningId,
          ':r': runsheetId,
          ':planned': plannedTasks(orgId, true),
          ':org': orgId,
          ':task': 'task',
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return { task: importedTask(out.Attributes ?? {}), claimed: true };
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
  const current = await storedTask(id);
  if (current?.['entity'] !== 'task' || current['org_id'] !== orgId) {
    throw invalidAt(path, "names no imported task of the planning's organisation");
  }
  // Already this runsheet's (a retry of the same P5, or the runsheet replaced with the task kept): nothing to write.
  if (isInRunsheet(current, planningId, runsheetId)) return { task: importedTask(current), claimed: false };
  throw alreadyPlanned(current, planningId, path);
}

const storedTask = async (id: string, consistent = true) =>
  (await db().send(new GetCommand({ TableName: mainTableName(), Key: taskKey(id), ConsistentRead: consistent }))).Item;

/** Frees the task from `runsheetId` of `planningId` (P6, a replaced runsheet, a P5 that lost a race); else nothing. */
export async function releaseTask(orgId: string, planningId: string, runsheetId: string, id: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: taskKey(id),
        UpdateExpression: 'SET GSI2PK = :unplanned REMOVE planning_id, runsheet_id',
        ConditionExpression: 'planning_id = :p AND runsheet_id = :r',
        ExpressionAttributeValues: { ':p': planningId, ':r': runsheetId, ':unplanned': plannedTasks(orgId, false) },
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}

/** `releaseTask` for each of `taskIds`, 25 at a time (P6, a replaced runsheet, X18). */
export async function releaseTasks(orgId: string, planningId: string, runsheetId: string, taskIds: readonly string[]) {
  for (let i = 0; i < taskIds.length; i += 25)
    await Promise.all(taskIds.slice(i, i + 25).map((t) => releaseTask(orgId, planningId, runsheetId, t)));
}
