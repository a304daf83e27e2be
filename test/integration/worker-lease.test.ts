/**
 * The one leased-worker shape (shared/workers/lease.ts) that the import runner, the planning job and the route-build
 * worker take their record with, at its edges, against the local DynamoDB: a claim from `queued`, a refused claim of
 * a live lease, the same message's reclaim, a lapsed lease taken over, a release that hands a fault's attempt back,
 * a stale run's release that changes nothing, and the third attempt that is the job's last.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { db, mainTableName } = await import('../../shared/db/client.ts');
const { claimLease, extendLease, isLastAttempt, releaseLease } = await import('../../shared/workers/lease.ts');
const { leaseKey } = await import('../../shared/workers/active-jobs.ts');
type LeasedRecord = import('../../shared/workers/lease.ts').LeasedRecord;

type Stored = Record<string, unknown> & { job?: Record<string, unknown> };
const MINUTE = 60_000;

/** A waiting record of its own, leased on the record itself (as imports and route builds are). */
async function queuedRecord(): Promise<LeasedRecord> {
  const key = { PK: `LEASE#${randomUUID()}`, SK: 'X' };
  await db().send(new PutCommand({ TableName: mainTableName(), Item: { ...key, status: 'queued', statuses: [] } }));
  return { name: 'test', key, status: 'status', queued: 'queued', running: 'running' };
}

const read = async (record: LeasedRecord) =>
  (await db().send(new GetCommand({ TableName: mainTableName(), Key: record.key, ConsistentRead: true })))
    .Item as Stored;

describe('a worker’s lease', () => {
  it('is taken from queued once: the first attempt, its owner, its end in the sweep’s key and the move written', async () => {
    const record = await queuedRecord();
    const claimed = await claimLease<Stored>(record, 'queued', 'message-1', 10 * MINUTE, {
      entering: { set: { moved: 'yes' }, append: { statuses: ['running'] } },
      always: { set: { touched: 1 } },
    });
    expect(claimed).toMatchObject({
      status: 'running',
      lease_owner: 'message-1',
      attempts: 1,
      moved: 'yes',
      touched: 1,
    });
    expect(claimed!['statuses']).toEqual(['running']);
    expect(claimed!['GSI3SK']).toBe(leaseKey(claimed!['lease_until'] as number));
    expect(claimed!['lease_until'] as number).toBeGreaterThan(Date.now() + 5 * MINUTE);
    // A second message that read `queued` too finds it taken.
    expect(await claimLease(record, 'queued', 'message-2', 10 * MINUTE)).toBeUndefined();
    // Nor may it take the live lease from the running status.
    expect(await claimLease(record, 'running', 'message-2', 10 * MINUTE)).toBeUndefined();
    expect(await read(record)).toMatchObject({ lease_owner: 'message-1', attempts: 1 });
    // A record in any other status is no worker's to take.
    expect(await claimLease(record, 'completed', 'message-1', 10 * MINUTE)).toBeUndefined();
  });

  it('is taken again by the same message (an earlier receive that failed without releasing), one attempt more', async () => {
    const record = await queuedRecord();
    await claimLease(record, 'queued', 'message-1', 10 * MINUTE);
    const again = await claimLease<Stored>(record, 'running', 'message-1', 10 * MINUTE);
    expect(again).toMatchObject({ status: 'running', lease_owner: 'message-1', attempts: 2 });
  });

  it('is taken over by another message once released, and a release hands back a fault’s attempt only', async () => {
    const record = await queuedRecord();
    await claimLease(record, 'queued', 'message-1', 10 * MINUTE);
    // A dependency's fault: the attempt is handed back, the lease lapses, the sweep looks again later.
    await releaseLease(record, 'message-1', true);
    const released = await read(record);
    expect(released).toMatchObject({ status: 'running', attempts: 0 });
    expect(released['lease_until'] as number).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(released['GSI3SK'] as string)).toBeGreaterThan(Date.now());
    const taken = await claimLease<Stored>(record, 'running', 'message-2', 10 * MINUTE);
    expect(taken).toMatchObject({ lease_owner: 'message-2', attempts: 1 });
    // The first run's late release (its lease was taken over) changes nothing of the second's.
    await releaseLease(record, 'message-1', true);
    expect(await read(record)).toMatchObject({
      lease_owner: 'message-2',
      attempts: 1,
      lease_until: taken!['lease_until'],
    });
    // A failure of the job's own keeps its attempt.
    await releaseLease(record, 'message-2', false);
    expect(await read(record)).toMatchObject({ attempts: 1 });
  });

  it('counts three runs of the job’s own, and the third is its last', async () => {
    const record = await queuedRecord();
    let run = await claimLease<Stored>(record, 'queued', 'message-1', 10 * MINUTE);
    for (const owner of ['message-2', 'message-3']) {
      expect(isLastAttempt(run!['attempts'] as number)).toBe(false);
      await releaseLease(record, String(run!['lease_owner']), false);
      run = await claimLease<Stored>(record, 'running', owner, 10 * MINUTE);
    }
    expect(run).toMatchObject({ lease_owner: 'message-3', attempts: 3 });
    expect(isLastAttempt(run!['attempts'] as number)).toBe(true);
  });

  it('is extended while running, and only while running', async () => {
    const record = await queuedRecord();
    const claimed = await claimLease<Stored>(record, 'queued', 'message-1', MINUTE);
    await extendLease(record, 30 * MINUTE);
    const extended = await read(record);
    expect(extended['lease_until'] as number).toBeGreaterThan(claimed!['lease_until'] as number);
    expect(extended['GSI3SK']).toBe(leaseKey(extended['lease_until'] as number));
    const waiting = await queuedRecord();
    await expect(extendLease(waiting, MINUTE)).rejects.toThrow();
  });

  it('lives in a nested member, for the one job its guard names (the planning’s job)', async () => {
    const key = { PK: `LEASE#${randomUUID()}`, SK: 'X' };
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: { ...key, job: { id: 'job-2', current_status: 'queued', statuses: [] } },
      }),
    );
    const of = (jobId: string): LeasedRecord => ({
      name: 'test',
      key,
      at: 'job.',
      status: 'current_status',
      queued: 'queued',
      running: 'processing',
      guard: { condition: 'job.id = :job', values: { ':job': jobId } },
    });
    // A message of an earlier job of the record takes nothing.
    expect(await claimLease(of('job-1'), 'queued', 'message-1', MINUTE)).toBeUndefined();
    const claimed = await claimLease<Stored>(of('job-2'), 'queued', 'message-2', MINUTE, {
      entering: { append: { statuses: ['processing'] } },
    });
    expect(claimed!.job).toMatchObject({
      id: 'job-2',
      current_status: 'processing',
      lease_owner: 'message-2',
      attempts: 1,
      statuses: ['processing'],
    });
    expect(claimed!['GSI3SK']).toBe(leaseKey(claimed!.job!['lease_until'] as number));
    await releaseLease(of('job-2'), 'message-2', false);
    expect(await claimLease<Stored>(of('job-2'), 'processing', 'message-3', MINUTE)).toMatchObject({
      job: { lease_owner: 'message-3', attempts: 2 },
    });
  });
});
