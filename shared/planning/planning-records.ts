/**
 * A planning's stored records and their reads: the planning `PLANNING#<id> / PROFILE` (name, counts, version, job)
 * and the runsheets and drivers of its partition. Below plannings.ts (its changes), planning-members.ts (P5–P8),
 * job-records.ts (its job) and the dispatch (its offers: waves.ts, wave-drivers.ts, dispatch.ts), which all read a
 * planning through these.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type Caller, seesAllOrganisations } from '#shared/auth/caller';
import { db, mainTableName, queryAll } from '#shared/db/client';
import { notFound } from '#shared/errors';
import { storedTaskCopy, taskFromCopy } from '#shared/imports/tasks';
import { planningKey, runsheetKey } from '#shared/planning/keys';
import type { JobStatus } from '#shared/planning/lifecycle';
import type { TravelSettings } from '#shared/routing/travel';

export type { JobStatus } from '#shared/planning/lifecycle';

export interface PlanningJob {
  id: string;
  current_status: JobStatus;
  statuses: { status: JobStatus; set_at_utc: string }[];
  status_updated_at: string;
  max_candidates: number;
  offer_ttl_s: number;
  /** Contract 4.7's settings; absent on a job started before them (JOB_DEFAULTS hold for it). */
  max_waves?: number;
  max_runsheets_per_driver?: number;
  max_location_age_s?: number;
  /** The running worker's lease (epoch ms) and how many runs the job has had. */
  lease_until?: number;
  lease_owner?: string;
  /** false from a move on; whether the move was told is marked apart (`markAnnounced`). */
  announced?: boolean;
  attempts?: number;
}

export interface Planning {
  id: string;
  org_id: string;
  name: string;
  version_seq: number;
  version_rev: string;
  total_runsheets: number;
  total_drivers: number;
  created_at: string;
  last_executed_at_client_time_utc: string | null;
  last_executed_at_client_timezone: string | null;
  last_executed_at_server_time: string | null;
  job?: PlanningJob | null;
  /** The last route build (contract 4.10) whose runsheets were added: a retried build knows it applied already. */
  route_build?: string;
}

export interface Runsheet {
  id: string;
  name?: string | undefined;
  tasks: Record<string, unknown>[];
  /** The imported tasks it holds (P5 `task_ids`): P6 and a replacement free them. Never shown. */
  task_ids?: string[] | undefined;
  /** Which drivers may take it (contract 4.7): among their `service_types` when both are known. */
  service_type?: string | undefined;
  /** A built runsheet's stops in visiting order, with their planned times (contract 4.10). */
  stops?: Record<string, unknown>[] | undefined;
}

/** A runsheet as P5 takes it: tasks inline, or imported tasks by id. */
export interface RunsheetInput {
  id: string;
  name?: string | undefined;
  tasks?: Record<string, unknown>[] | undefined;
  task_ids?: string[] | undefined;
  service_type?: string | undefined;
}

/**
 * A runsheet's tasks as its item stores them: a runsheet of imported tasks (`task_ids`: P5's or a route build's) keeps
 * each copy without the members the import left null (`storedTaskCopy`); a runsheet given its tasks keeps them as given.
 */
export const storedRunsheetTasks = (runsheet: { tasks: Record<string, unknown>[]; task_ids?: unknown }) =>
  Array.isArray(runsheet.task_ids) ? runsheet.tasks.map(storedTaskCopy) : runsheet.tasks;

/** A runsheet item's tasks as every reader shows them (`storedRunsheetTasks`' inverse). */
export const runsheetTasksOf = (item: Record<string, unknown>): Record<string, unknown>[] => {
  const tasks = (item['tasks'] as Record<string, unknown>[] | undefined) ?? [];
  return Array.isArray(item['task_ids']) ? tasks.map(taskFromCopy) : tasks;
};

/** A runsheet item as the execution reads it (X20, X22, the risk check): its tasks, its built stops and travel. */
export async function readRunsheetItem(planId: string, runsheetId: string) {
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: runsheetKey(planId, runsheetId) }));
  if (!out.Item) throw notFound('runsheet');
  return { ...out.Item, tasks: runsheetTasksOf(out.Item) } as {
    id: string;
    name?: string;
    service_type?: string;
    tasks?: (Record<string, unknown> & { id: string })[];
    stops?: Record<string, unknown>[];
    /** A built runsheet's travel model (routing/apply.ts); none on a hand-made one or one built before it was kept. */
    travel?: TravelSettings & { model?: string };
  };
}

export async function findPlanning(id: string, consistent = false): Promise<Planning | undefined> {
  const out = await db().send(
    new GetCommand({
      TableName: mainTableName(),
      Key: planningKey(id),
      ...(consistent ? { ConsistentRead: true } : {}),
    }),
  );
  return out.Item as Planning | undefined;
}

/** Planning readers (contract 4.6): SysAdmin and internal workers any; the others their organisation's. */
export async function visiblePlanning(caller: Caller, id: string): Promise<Planning> {
  const planning = await findPlanning(id);
  if (!planning) throw notFound('planning');
  if (seesAllOrganisations(caller) || (caller.orgId && planning.org_id === caller.orgId)) return planning;
  throw notFound('planning');
}

/** The planning's runsheets and drivers; `consistent` when it must include another writer's items just written. */
export async function planningContents(id: string, consistent = false) {
  const runsheets: Runsheet[] = [];
  const drivers: { id: string; name?: string; position: number }[] = [];
  /** Releases of imported tasks a P5 or P6 began and did not finish (see `finishRelease`): runsheet id → task ids. */
  const releases = new Map<string, string[]>();
  const items = await queryAll({
    TableName: mainTableName(),
    ...(consistent ? { ConsistentRead: true } : {}),
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': `PLANNING#${id}` },
  });
  for (const item of items) {
    const sk = String(item['SK']);
    if (sk.startsWith('RUNSHEET#'))
      runsheets.push({
        id: item['id'] as string,
        name: item['name'] as string | undefined,
        tasks: runsheetTasksOf(item),
        ...(Array.isArray(item['task_ids']) ? { task_ids: item['task_ids'] as string[] } : {}),
        ...(typeof item['service_type'] === 'string' ? { service_type: item['service_type'] } : {}),
        ...(Array.isArray(item['stops']) ? { stops: item['stops'] as Record<string, unknown>[] } : {}),
      });
    else if (sk.startsWith('RELEASE#')) releases.set(sk.slice('RELEASE#'.length), item['task_ids'] as string[]);
    else if (sk.startsWith('DRIVER#'))
      drivers.push({
        id: item['id'] as string,
        ...(typeof item['name'] === 'string' ? { name: item['name'] } : {}),
        position: Number(item['position'] ?? 0),
      });
  }
  drivers.sort((a, b) => a.position - b.position);
  return { runsheets, drivers: drivers.map(({ position: _position, ...driver }) => driver), releases };
}
