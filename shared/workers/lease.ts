/**
 * The one leased-worker shape: the import runner (shared/imports/runner.ts), the planning job
 * (shared/planning/job.ts) and the route-build worker (shared/routing/worker.ts) each take their record with it.
 *
 * A run takes the record with one conditional write: from the waiting status (`queued`), or from the running status
 * when the lease there has lapsed (its run died) or is this message's own (an earlier receive of it failed without
 * releasing). The write names the owner (the queue message), counts the attempt and moves the record's key in the
 * requeue sweep's watch list (shared/workers/active-jobs.ts) to the lease's end, so a run whose message is lost is
 * handed a new one. A run that fails lets its lease lapse at once, so the queue's retry takes it over; a dependency's
 * fault is no attempt of the job's own and is handed back. A job fails for good after MAX_ATTEMPTS runs of its own.
 * How a run ends (the end written then told, a failure failing the job or handing it back): shared/workers/endings.ts.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { logger } from '#shared/log';
import { leaseKey, requeueAt } from '#shared/workers/active-jobs';

/** Runs of one job at most: one that fails for its own reasons on this attempt fails the job. */
export const MAX_ATTEMPTS = 3;

/** Whether a run on `attempts` that failed for its own reasons is the job's last. */
export const isLastAttempt = (attempts: number | undefined) => (attempts ?? 1) >= MAX_ATTEMPTS;

/** Where a worker's record keeps its status and its lease. */
export interface LeasedRecord {
  /** The worker, as a log line names it (`import`, `planning job`, `route build`). */
  name: string;
  /** The record's key. */
  key: Record<string, unknown>;
  /** The path of the member that holds the status and the lease: '' for the record itself, `job.` for its job. */
  at?: string;
  /** The status member's name (under `at`), the status of a record waiting for its first run, and of one running. */
  status: string;
  queued: string;
  running: string;
  /** One more condition of every write (the planning's job, by id), with its values. */
  guard?: { condition: string; values: Record<string, unknown> };
}

/** Members set on a claim (under `at`): `set` as they are, `append` added to the end of a list. */
export interface ClaimWrites {
  set?: Record<string, unknown>;
  append?: Record<string, unknown[]>;
}

interface Expression {
  sets: string[];
  conditions: string[];
  names: Record<string, string>;
  values: Record<string, unknown>;
}

function expression(record: LeasedRecord): Expression {
  return {
    sets: [],
    conditions: [`${record.at ?? ''}#status = :running`],
    names: { '#status': record.status },
    values: { ':running': record.running, ...record.guard?.values },
  };
}

function send(record: LeasedRecord, e: Expression, returnValues = false) {
  if (record.guard) e.conditions.unshift(record.guard.condition);
  return db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: record.key,
      UpdateExpression: `SET ${e.sets.join(', ')}`,
      ConditionExpression: e.conditions.join(' AND '),
      ExpressionAttributeNames: e.names,
      ExpressionAttributeValues: e.values,
      ...(returnValues ? { ReturnValues: 'ALL_NEW' as const } : {}),
    }),
  );
}

function addWrites(e: Expression, at: string, writes: ClaimWrites | undefined, tag: string) {
  Object.entries(writes?.set ?? {}).forEach(([member, value], i) => {
    e.names[`#${tag}${i}`] = member;
    e.values[`:${tag}${i}`] = value;
    e.sets.push(`${at}#${tag}${i} = :${tag}${i}`);
  });
  Object.entries(writes?.append ?? {}).forEach(([member, entries], i) => {
    e.names[`#${tag}l${i}`] = member;
    e.values[`:${tag}l${i}`] = entries;
    e.sets.push(`${at}#${tag}l${i} = list_append(${at}#${tag}l${i}, :${tag}l${i})`);
  });
}

/**
 * Takes the record for `owner` until `leaseMs` from now: from `queued` (moving it to the running status, its first
 * attempt), or from the running status whose lease lapsed or is `owner`'s (one attempt more). `current` is the status
 * the worker read. Answers the record as written, or undefined when another run holds it or it has moved on.
 * `entering` is written with a move from `queued`, `always` with either claim.
 */
export async function claimLease<T>(
  record: LeasedRecord,
  current: string,
  owner: string,
  leaseMs: number,
  writes: { entering?: ClaimWrites; always?: ClaimWrites } = {},
): Promise<T | undefined> {
  if (current !== record.queued && current !== record.running) return undefined;
  const at = record.at ?? '';
  const lease = clock.nowMs() + leaseMs;
  const e = expression(record);
  e.sets.push(`${at}lease_until = :lease`, `${at}lease_owner = :owner`);
  e.values[':lease'] = lease;
  e.values[':owner'] = owner;
  e.values[':one'] = 1;
  if (current === record.queued) {
    e.conditions[0] = `${at}#status = :queued`;
    e.values[':queued'] = record.queued;
    e.sets.unshift(`${at}#status = :running`);
    e.sets.push(`${at}attempts = :one`);
    addWrites(e, at, writes.entering, 'e');
  } else {
    e.conditions.push(`(${at}lease_until < :nowMs OR ${at}lease_owner = :owner)`);
    e.values[':nowMs'] = clock.nowMs();
    e.values[':zero'] = 0;
    e.sets.push(`${at}attempts = if_not_exists(${at}attempts, :zero) + :one`);
  }
  e.sets.push('GSI3SK = :leaseKey');
  e.values[':leaseKey'] = leaseKey(lease);
  addWrites(e, at, writes.always, 'a');
  try {
    return (await send(record, e, true)).Attributes as T;
  } catch (error) {
    if (isConditionalFailure(error)) return undefined;
    throw error;
  }
}

/** Moves the lease's end (and the sweep's look at the record) to `leaseMs` from now, while the record runs. */
export async function extendLease(record: LeasedRecord, leaseMs: number): Promise<void> {
  const at = record.at ?? '';
  const lease = clock.nowMs() + leaseMs;
  const e = expression(record);
  e.sets.push(`${at}lease_until = :lease`, 'GSI3SK = :leaseKey');
  Object.assign(e.values, { ':lease': lease, ':leaseKey': leaseKey(lease) });
  await send(record, e);
}

/**
 * Lets `owner`'s lease lapse now, so that the queue's retry (or, if its message is lost too, the requeue sweep's new
 * one shortly) takes the record over. `fault`: the run failed on a dependency's fault, no attempt of the job's own,
 * so its attempt is handed back. Never throws: if the store is down for this too, the retry of the same message
 * takes its own lease over anyway.
 */
export async function releaseLease(record: LeasedRecord, owner: string, fault: boolean): Promise<void> {
  const at = record.at ?? '';
  const e = expression(record);
  e.sets.push(`${at}lease_until = :past`, 'GSI3SK = :later');
  e.conditions.push(`${at}lease_owner = :owner`);
  Object.assign(e.values, { ':past': clock.nowMs() - 1, ':later': requeueAt(clock.nowMs()), ':owner': owner });
  if (fault) {
    e.sets.push(`${at}attempts = ${at}attempts - :one`);
    e.values[':one'] = 1;
  }
  await send(record, e).catch((error: unknown) =>
    logger.warn(`${record.name} lease not released`, { error: error as Error }),
  );
}
