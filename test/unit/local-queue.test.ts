/** The local work queue behaves like SQS with a redrive policy: a failing message is retried, then dead-lettered. */
import { describe, expect, it } from 'vitest';
import {
  drainLocalQueue,
  LOCAL_MAX_RECEIVES,
  localDeadLetters,
  localQueue,
  registerLocalWorker,
} from '../../shared/ports/queue.ts';

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe('the local work queue', () => {
  it('hands a message back after a fault until it succeeds, exactly once', async () => {
    let calls = 0;
    let done = 0;
    registerLocalWorker('webhook', async () => {
      calls++;
      if (calls < 3) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
      done++;
    });
    await localQueue.enqueue({ kind: 'webhook', id: 'm1' }, 0);
    for (let i = 0; i < 50 && done === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    await drainLocalQueue();
    expect({ calls, done }).toEqual({ calls: 3, done: 1 });
  });

  it('dead-letters a poison message after the receive limit, with the reason', async () => {
    let calls = 0;
    registerLocalWorker('import', async () => {
      calls++;
      throw new Error('not a CSV job');
    });
    await localQueue.enqueue({ kind: 'import', id: 'poison' }, 0);
    for (let i = 0; i < 100 && localDeadLetters.length === 0; i++) await settle();
    expect(calls).toBe(LOCAL_MAX_RECEIVES);
    expect(localDeadLetters).toEqual([
      { message: { kind: 'import', id: 'poison', message_id: expect.any(String) }, reason: 'not a CSV job' },
    ]);
  }, 20_000);
});
