/**
 * The typed client's task event queue (issue 38) with a fake clock and a fake network: events go in the order
 * recorded, one at a time; a 503 or no network sends the same event again under the same Idempotency-Key before
 * anything behind it; a 409 is final and kept in `rejected`; storage keeps what waits across a restart.
 */
import { describe, expect, it } from 'vitest';
import { type QueuedTaskEvent, TaskEventQueue } from '../../lib/client/task-event-queue.ts';
import { FakeClock, settle } from '../support/fake-clock.ts';

type Answer = number | 'network';

function fakeNetwork(script: Answer[] = []) {
  const requests: { url: string; key: string; type: string; at: string }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    const headers = init.headers as Record<string, string>;
    const body = JSON.parse(String(init.body)) as { type: string; happened_at_utc: string };
    requests.push({ url, key: headers['idempotency-key']!, type: body.type, at: body.happened_at_utc });
    const answer = script.shift() ?? 201;
    if (answer === 'network') throw new TypeError('fetch failed');
    return new Response(JSON.stringify(answer >= 400 ? { detail: `answered ${answer}` } : { task: {} }), {
      status: answer,
      headers: answer === 503 ? { 'retry-after': '2' } : {},
    });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, requests };
}

const at = (minute: number) => new Date(Date.UTC(2026, 10, 25, 9, minute)).toISOString();

describe('TaskEventQueue', () => {
  it('sends in the order recorded, one at a time, resending the same event under the same key until answered', async () => {
    const clock = new FakeClock('2026-11-25T08:00:00Z');
    const network = fakeNetwork([503, 'network']);
    const queue = new TaskEventQueue({ baseUrl: 'http://x', token: () => 't', fetch: network.fetch, clock });
    await queue.start();
    queue.record('RS-1', 'T-1', { type: 'picked_up', happened_at_utc: at(1) });
    queue.record('RS-1', 'T-1', { type: 'delivered', happened_at_utc: at(2) });
    queue.record('RS-1', 'T-2', { type: 'picked_up', happened_at_utc: at(3) });
    await settle();
    // The first answered 503 (Retry-After 2): nothing behind it went.
    expect(network.requests.map((r) => r.type)).toEqual(['picked_up']);
    await clock.advance(2000);
    // Then no network: the same event again after a growing pause (2 s: the second failure in a row).
    expect(network.requests).toHaveLength(2);
    await clock.advance(1000);
    expect(network.requests).toHaveLength(2);
    await clock.advance(1000);
    await queue.drained();
    expect(network.requests.map((r) => `${r.type}@${r.at}`)).toEqual([
      `picked_up@${at(1)}`,
      `picked_up@${at(1)}`,
      `picked_up@${at(1)}`,
      `delivered@${at(2)}`,
      `picked_up@${at(3)}`,
    ]);
    expect(new Set(network.requests.slice(0, 3).map((r) => r.key)).size).toBe(1);
    expect(new Set(network.requests.map((r) => r.key)).size).toBe(3);
    expect(network.requests[4]!.url).toBe('http://x/v1/driver/runsheets/RS-1/tasks/T-2/events');
    expect(queue.stats).toMatchObject({ recorded: 3, sent: 3, requests: 5, retries: 2, rejected: 0 });
  });

  it('keeps a refused event in rejected and goes on; a 200 (recorded already) counts as sent', async () => {
    const network = fakeNetwork([409, 200]);
    const told: number[] = [];
    const queue = new TaskEventQueue({
      baseUrl: 'http://x',
      token: () => 't',
      fetch: network.fetch,
      clock: new FakeClock('2026-11-25T08:00:00Z'),
      onRejected: (_event, problem) => told.push(problem.status),
    });
    await queue.start();
    queue.record('RS-1', 'T-1', { type: 'delivered', happened_at_utc: at(1) });
    queue.record('RS-1', 'T-1', { type: 'picked_up', happened_at_utc: at(2) });
    await queue.drained();
    expect(queue.rejected.map((r) => [r.event.event.type, r.status, r.detail])).toEqual([
      ['delivered', 409, 'answered 409'],
    ]);
    expect(told).toEqual([409]);
    expect(queue.stats).toMatchObject({ sent: 1, duplicates: 1, rejected: 1 });
  });

  it('keeps what waits across a restart, in order, under the same keys', async () => {
    let stored: QueuedTaskEvent[] = [];
    const storage = {
      load: () => stored,
      save: (events: readonly QueuedTaskEvent[]) => {
        stored = [...events];
      },
    };
    const offline = fakeNetwork(['network', 'network', 'network']);
    const clock = new FakeClock('2026-11-25T08:00:00Z');
    const first = new TaskEventQueue({ baseUrl: 'http://x', token: () => 't', fetch: offline.fetch, clock, storage });
    await first.start();
    first.record('RS-1', 'T-1', { type: 'arrived', happened_at_utc: at(1) });
    first.record('RS-1', 'T-1', { type: 'picked_up', happened_at_utc: at(2) });
    await settle();
    first.stop();
    expect(stored.map((e) => e.event.type)).toEqual(['arrived', 'picked_up']);
    const online = fakeNetwork();
    const second = new TaskEventQueue({ baseUrl: 'http://x', token: () => 't', fetch: online.fetch, clock, storage });
    await second.start();
    await second.drained();
    expect(online.requests.map((r) => r.type)).toEqual(['arrived', 'picked_up']);
    expect(online.requests[0]!.key).toBe(offline.requests[0]!.key);
    expect(stored).toEqual([]);
  });
});
