/**
 * Issue 56 item 4: the one way the three leased workers (the import runner, the planning job, the route build) end a
 * run (shared/workers/endings.ts): a job's end written, then told; a failed run failing its job for good only for its
 * own reasons on its last attempt, else handing it to the queue's retry (a dependency's fault uncounted). The
 * workers' own runs are the e2e files' (workers-faults, planning-faults, routing*, imports*).
 */
import { describe, expect, it } from 'vitest';
import { afterFailure, failRun, finishJob } from '../../shared/workers/endings.ts';
import { type LeasedRecord, MAX_ATTEMPTS } from '../../shared/workers/lease.ts';

/** A failure of the job's own: DynamoDB refusing a write as invalid (a client fault). */
const own = () =>
  Object.assign(new Error('Item size has exceeded the maximum allowed size'), {
    name: 'ValidationException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
  });
/** A dependency's fault: DynamoDB throttling the call. */
const fault = () =>
  Object.assign(new Error('Rate exceeded'), {
    name: 'ThrottlingException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
  });

const record: LeasedRecord = {
  name: 'test job',
  key: { PK: 'JOB#1', SK: 'PROFILE' },
  status: 'status',
  queued: 'queued',
  running: 'running',
};

describe('afterFailure: what a failed run makes of its job', () => {
  it('retries the job’s own failure before its last attempt, and fails it on the last', () => {
    expect(afterFailure(own(), undefined)).toBe('retry');
    for (let attempts = 1; attempts < MAX_ATTEMPTS; attempts++) expect(afterFailure(own(), attempts)).toBe('retry');
    expect(afterFailure(own(), MAX_ATTEMPTS)).toBe('fail');
    expect(afterFailure(own(), MAX_ATTEMPTS + 1)).toBe('fail');
  });

  it('hands a dependency’s fault back uncounted on any attempt, the last included', () => {
    for (const attempts of [undefined, 1, MAX_ATTEMPTS, MAX_ATTEMPTS + 1]) {
      expect(afterFailure(fault(), attempts)).toBe('hand_back');
    }
    const wrapped = new Error('the batch failed', { cause: fault() });
    expect(afterFailure(wrapped, MAX_ATTEMPTS)).toBe('hand_back');
  });
});

describe('finishJob: the end written, then told', () => {
  it('tells the job as its end wrote it, after the write, and answers it', async () => {
    const steps: string[] = [];
    const ended = await finishJob(
      async () => {
        steps.push('end');
        return { id: 'job', status: 'completed', announced: false };
      },
      async (job) => {
        steps.push(`announce ${job.status}`);
      },
    );
    expect(steps).toEqual(['end', 'announce completed']);
    expect(ended).toEqual({ id: 'job', status: 'completed', announced: false });
  });

  it('tells nothing when the end is not written, and fails when the telling fails (the end stays written)', async () => {
    const told: string[] = [];
    await expect(
      finishJob(
        () => Promise.reject(own()),
        async () => {
          told.push('told');
        },
      ),
    ).rejects.toThrow('Item size');
    expect(told).toEqual([]);
    let ends = 0;
    await expect(
      finishJob(
        async () => ++ends,
        () => Promise.reject(fault()),
      ),
    ).rejects.toThrow('Rate exceeded');
    expect(ends).toBe(1);
  });
});

describe('failRun: after a run failed', () => {
  /** A run on `attempts` failing with `error`: what it did (failed the job, released the lease) and how it ended. */
  async function run(error: Error, attempts: number | undefined) {
    const did: string[] = [];
    const release = async (held: LeasedRecord, owner: string, handBack: boolean) => {
      did.push(`release ${held.name} ${owner} ${handBack ? 'handed back' : 'counted'}`);
    };
    const outcome = await failRun(
      { record, owner: 'message-1', attempts },
      error,
      async () => {
        did.push('failed for good');
      },
      release,
    ).then(
      () => 'returned',
      (thrown: unknown) => (thrown === error ? 'threw the same error' : `threw ${String(thrown)}`),
    );
    return { did, outcome };
  }

  it('fails the job for good on its last attempt, releasing nothing, and returns', async () => {
    expect(await run(own(), MAX_ATTEMPTS)).toEqual({ did: ['failed for good'], outcome: 'returned' });
  });

  it('releases the lease, the attempt counted, and throws again for the queue’s retry before the last', async () => {
    expect(await run(own(), 1)).toEqual({
      did: ['release test job message-1 counted'],
      outcome: 'threw the same error',
    });
  });

  it('hands a dependency’s fault back uncounted, even on the last attempt', async () => {
    expect(await run(fault(), MAX_ATTEMPTS)).toEqual({
      did: ['release test job message-1 handed back'],
      outcome: 'threw the same error',
    });
  });

  it('fails when failing the job for good fails, leaving the queue’s retry to take it over', async () => {
    const error = own();
    await expect(
      failRun({ record, owner: 'message-1', attempts: MAX_ATTEMPTS }, error, () => Promise.reject(fault())),
    ).rejects.toThrow('Rate exceeded');
  });
});
