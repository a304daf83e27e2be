/**
 * Issue 25.5: the queue worker checks the time left before each message of a batch. When it cannot hold one more,
 * that message and every later one are reported as batch item failures (SQS hands them out again) instead of the
 * function running past its timeout and the whole batch being retried.
 */
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { handler, LEAST_TIME_MS, SPARE_MS } = await import('../../functions/workers/queue.ts');
const { asFunction } = await import('../../shared/local-invocation.ts');

/** A webhook delivery for a partner that does not exist: the worker looks it up and is done (a success). */
const record = (id: string): SQSRecord => ({
  messageId: id,
  receiptHandle: `r-${id}`,
  body: JSON.stringify({
    kind: 'webhook',
    partner_id: `no-such-partner-${id}`,
    event_id: `evt-${id}`,
    type: 'task.updated',
    timestamp: '2026-01-01T00:00:00Z',
    data: {},
    attempt: 1,
    first_attempt_at: 0,
  }),
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '0',
    SenderId: 'test',
    ApproximateFirstReceiveTimestamp: '0',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:work',
  awsRegion: 'eu-west-1',
});

/** A Lambda context whose remaining time is each of `remaining` in turn (the last one thereafter). */
const contextWith = (...remaining: number[]) => {
  const asked: number[] = [];
  return {
    asked,
    getRemainingTimeInMillis: () => {
      const value = remaining[Math.min(asked.length, remaining.length - 1)]!;
      asked.push(value);
      return value;
    },
  };
};

const run = (records: SQSRecord[], context: ReturnType<typeof contextWith>) =>
  asFunction('workers/queue', () => handler({ Records: records }, context));

describe('the queue worker and the time left (issue 25.5)', () => {
  it('handles the whole batch while there is time', async () => {
    const context = contextWith(900_000);
    const result = await run([record('a1'), record('a2'), record('a3')], context);
    expect(result.batchItemFailures).toEqual([]);
    expect(context.asked).toHaveLength(3);
  });

  it('stops when the time left cannot hold one more message, and hands the rest back as batch item failures', async () => {
    // Time enough for the first message; then less than a webhook attempt needs.
    const context = contextWith(900_000, LEAST_TIME_MS.webhook + SPARE_MS - 1);
    const result = await run([record('b1'), record('b2'), record('b3'), record('b4')], context);
    expect(result.batchItemFailures).toEqual([
      { itemIdentifier: 'b2' },
      { itemIdentifier: 'b3' },
      { itemIdentifier: 'b4' },
    ]);
    // It stopped at the first message that did not fit: the later ones were not even looked at.
    expect(context.asked).toHaveLength(2);
  });

  it('keeps an import from starting when the time left is below what an import needs', async () => {
    const context = contextWith(LEAST_TIME_MS.import);
    const importRecord = { ...record('c1'), body: JSON.stringify({ kind: 'import', job_id: 'no-such-job' }) };
    const result = await run([importRecord, record('c2')], context);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'c1' }, { itemIdentifier: 'c2' }]);
  });
});
