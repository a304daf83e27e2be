/**
 * Tracking links (contract 4.11: X27 makes or returns one, X28 revokes it, X29 reads it with no account).
 *
 * Keys: the task's link `TRACKING#TASK#<task id> / LINK` (its random `link_id`, when it was made) and the lookup
 * `TRACKING#<SHA-256 of the token, hex> / TOKEN` (the task and its organisation), both with the table's TTL
 * (`expires_at`, 7 days after the link was made) and written and deleted together in one transaction.
 *
 * The token is never stored. It is the HMAC-SHA-256 of the link's random id (128 bits) under a key of the service's
 * (shared/http/page-token-key.ts, its own HKDF label), 256 bits in base64url: so X27 can show the same link again to
 * the task's readers, while the table holds only its SHA-256, which X29 looks up. A token that is unknown, revoked
 * or expired answers the same 404 after the same one consistent GetItem by hash (never a Scan); an expiry is checked
 * in code too, since TTL deletes late. X29 counts each request against its address and its token (60 a minute each,
 * shared/db/window-counter.ts) before it looks.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { findOrganisation } from '#shared/accounts/organisations';
import { type Caller, seesAllOrganisations } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, getAll, isConditionalFailure, mainTableName, transactWrite } from '#shared/db/client';
import { admitInWindow } from '#shared/db/window-counter';
import { notFound } from '#shared/errors';
import { taskKey } from '#shared/imports/tasks';
import { dispatchRecords } from '#shared/planning/dispatch-records';
import { remainingStops } from '#shared/planning/etas';
import { liveEtas, type TimelineEntry } from '#shared/planning/execution';
import { progressKey } from '#shared/planning/keys';
import type { TaskStatus } from '#shared/planning/lifecycle';
import { readRunsheetItem } from '#shared/planning/planning-records';
import { LINK_LIFETIME_MS, linkExpiresMs, type Placement, trackingView } from '#shared/tracking/view';

/** X29's budgets: requests a minute from one address, and for one token from anywhere. */
export const TRACKING_READS_PER_ADDRESS = 60;
export const TRACKING_READS_PER_TOKEN = 60;
const WINDOW_S = 60;

const linkKey = (taskId: string) => ({ PK: `TRACKING#TASK#${taskId}`, SK: 'LINK' });
const lookupKey = (tokenHash: string) => ({ PK: `TRACKING#${tokenHash}`, SK: 'TOKEN' });

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');
const tokenOf = (key: Buffer, linkId: string) => createHmac('sha256', key).update(linkId, 'utf8').digest('base64url');

type Stored = Record<string, unknown>;
interface Link {
  link_id: string;
  token_hash: string;
  made_at: string;
}

const NOT_FOUND = () => notFound('tracking link');

/** The imported task `caller` may read (X10's readers, tenancy by the caller's organisation); else a 404. */
async function visibleTask(caller: Caller, taskId: string) {
  const { Item } = await db().send(new GetCommand({ TableName: mainTableName(), Key: taskKey(taskId) }));
  if (Item?.['entity'] !== 'task') throw notFound('task');
  if (!(seesAllOrganisations(caller) || (caller.orgId && Item['org_id'] === caller.orgId))) throw notFound('task');
  return Item as Stored & { id: string };
}

const readLink = async (taskId: string) =>
  (await db().send(new GetCommand({ TableName: mainTableName(), Key: linkKey(taskId), ConsistentRead: true }))).Item as
    | (Link & Stored)
    | undefined;

/**
 * Where the task stands in its runsheet, if it is in one: the runsheet's status, the task's progress, whether its
 * drop-off is the next stop, and (`live`: X29) the drop-off's ETA and the driver's fix. Reads the runsheet (its
 * tasks' copies), its group and claim, its tasks' progress (one BatchGetItem) and, while under way, the fix.
 */
async function placementOf(task: Stored & { id: string }, live: boolean): Promise<Placement | undefined> {
  const planId = task['planning_id'];
  const runsheetId = task['runsheet_id'];
  if (typeof planId !== 'string' || typeof runsheetId !== 'string') return undefined;
  const [runsheet, statusOf] = await Promise.all([
    readRunsheetItem(planId, runsheetId).catch(() => undefined),
    dispatchRecords(planId, [runsheetId]),
  ]);
  if (!runsheet) return undefined;
  const tasks = runsheet.tasks ?? [];
  const progresses = await getAll<{ task_id: string; status: TaskStatus; timeline: TimelineEntry[] }>(
    mainTableName(),
    [...new Set(tasks.map((t) => t.id))].map((id) => progressKey(planId, runsheetId, id)),
  );
  const progressOf = new Map(progresses.map((p) => [p.task_id, p]));
  const taskStatus = (id: string): TaskStatus => progressOf.get(id)?.status ?? 'pending';
  const status = statusOf(runsheetId);
  const next = remainingStops(tasks, runsheet.stops, taskStatus)[0];
  const etas = live ? await liveEtas(runsheet, status, String(task['org_id']), taskStatus) : undefined;
  return {
    runsheet: status,
    task: { status: taskStatus(task.id), timeline: progressOf.get(task.id)?.timeline ?? [] },
    dropoffIsNext: next?.taskId === task.id && next.kind === 'dropoff',
    dropoffEta: etas?.taskEtas(task.id).eta_dropoff_utc ?? null,
    fix: etas?.fix,
  };
}

/** The link as X27 shows it: its URL (the token in it), the token's last four characters, when it expires. */
function linkView(key: Buffer, link: Link, origin: string, expiresMs: number) {
  const token = tokenOf(key, link.link_id);
  return {
    tracking: {
      url: `${origin}/track/${token}`,
      token_hint: token.slice(-4),
      expires_at: new Date(expiresMs).toISOString(),
    },
  };
}

/**
 * X27: the task's link, made the first time (`created`), the same one after, while it works. One whose time is up
 * (7 days, or a day after its task was over) is replaced by a new one. `origin` is where the service is reached
 * (the request's own scheme and host), which the page `/track/<token>` is served from; `key` the links' HMAC key
 * (shared/http/page-token-key.ts, `trackingLinkKey`).
 */
export async function makeTrackingLink(caller: Caller, taskId: string, origin: string, key: Buffer) {
  const task = await visibleTask(caller, taskId);
  const [current, placement] = await Promise.all([readLink(taskId), placementOf(task, false)]);
  const now = clock.nowMs();
  if (current) {
    const expiresMs = linkExpiresMs({ placement, madeAtMs: Date.parse(current.made_at) });
    if (expiresMs > now) return { created: false, ...linkView(key, current, origin, expiresMs) };
  }
  const link: Link = {
    link_id: randomBytes(16).toString('base64url'),
    token_hash: '',
    made_at: new Date(now).toISOString(),
  };
  link.token_hash = hashOf(tokenOf(key, link.link_id));
  const ttl = Math.ceil((now + LINK_LIFETIME_MS) / 1000);
  try {
    await transactWrite([
      {
        Put: {
          TableName: mainTableName(),
          Item: { ...linkKey(taskId), entity: 'tracking_link', task_id: taskId, ...link, expires_at: ttl },
          // Of two X27 calls at once, one makes the link; the other answers it (below).
          ConditionExpression: current ? 'link_id = :old' : 'attribute_not_exists(PK)',
          ...(current ? { ExpressionAttributeValues: { ':old': current.link_id } } : {}),
        },
      },
      {
        Put: {
          TableName: mainTableName(),
          Item: {
            ...lookupKey(link.token_hash),
            entity: 'tracking_token',
            task_id: taskId,
            org_id: task['org_id'],
            made_at: link.made_at,
            expires_at: ttl,
          },
        },
      },
      ...(current ? [{ Delete: { TableName: mainTableName(), Key: lookupKey(current.token_hash) } }] : []),
    ]);
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    const made = await readLink(taskId);
    if (!made) throw error;
    const expiresMs = linkExpiresMs({ placement, madeAtMs: Date.parse(made.made_at) });
    return { created: false, ...linkView(key, made, origin, expiresMs) };
  }
  return { created: true, ...linkView(key, link, origin, linkExpiresMs({ placement, madeAtMs: now })) };
}

/** X28: the task's link stops working at once (both items deleted together); a task without one answers the same. */
export async function revokeTrackingLink(caller: Caller, taskId: string) {
  await visibleTask(caller, taskId);
  const current = await readLink(taskId);
  if (current) {
    try {
      await transactWrite([
        {
          Delete: {
            TableName: mainTableName(),
            Key: linkKey(taskId),
            ConditionExpression: 'link_id = :id',
            ExpressionAttributeValues: { ':id': current.link_id },
          },
        },
        { Delete: { TableName: mainTableName(), Key: lookupKey(current.token_hash) } },
      ]);
    } catch (error) {
      // Replaced or revoked by another call meanwhile: the link this call read works no more either way.
      if (!isConditionalFailure(error)) throw error;
    }
  }
  return current ? 'The tracking link was revoked.' : 'The task had no tracking link.';
}

/**
 * X29: what the link's recipient may see. Counted first (its address, then its token: a 429 past either budget),
 * then one consistent GetItem of the token's hash: absent (unknown, revoked) or past its time, the same 404.
 */
export async function readTracking(token: string, sourceIp: string) {
  await admitInWindow(
    `x29-source#${sourceIp}`,
    TRACKING_READS_PER_ADDRESS,
    WINDOW_S,
    'tracking reads from one address',
  );
  const hash = hashOf(token);
  await admitInWindow(`x29-token#${hash}`, TRACKING_READS_PER_TOKEN, WINDOW_S, 'reads of one tracking link');
  const { Item: lookup } = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: lookupKey(hash), ConsistentRead: true }),
  );
  const madeAtMs = Date.parse(String(lookup?.['made_at']));
  if (!lookup || !(clock.nowMs() < madeAtMs + LINK_LIFETIME_MS)) throw NOT_FOUND();
  const [{ Item: task }, organisation] = await Promise.all([
    db().send(new GetCommand({ TableName: mainTableName(), Key: taskKey(String(lookup['task_id'])) })),
    findOrganisation(String(lookup['org_id'])),
  ]);
  if (task?.['entity'] !== 'task' || !organisation) throw NOT_FOUND();
  const placement = await placementOf(task as Stored & { id: string }, true);
  if (clock.nowMs() >= linkExpiresMs({ placement, madeAtMs })) throw NOT_FOUND();
  return {
    tracking: trackingView({
      organisationName: organisation.name,
      task: task as Stored & { id: string },
      placement,
      madeAtMs,
    }),
  };
}
