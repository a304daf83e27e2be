/**
 * The typed client's location uploader (issue 27.3) with a fake clock and a fake network: filtering, batching by time
 * and size, order, resends after a 503 or no network under the same Idempotency-Key, nothing accepted ever lost.
 */
import { describe, expect, it } from 'vitest';
import { type Fix, LocationUploader, type UploaderClock } from '../../lib/client/location-uploader.ts';

/** Timers that run only when the test moves time on. */
class FakeClock implements UploaderClock {
  private time = Date.parse('2026-11-24T08:00:00Z');
  private timers: { at: number; callback: () => void; id: number }[] = [];
  private ids = 0;
  now = () => this.time;
  setTimeout = (callback: () => void, ms: number) => {
    const id = ++this.ids;
    this.timers.push({ at: this.time + ms, callback, id });
    return id;
  };
  clearTimeout = (id: unknown) => {
    this.timers = this.timers.filter((timer) => timer.id !== id);
  };
  /** Moves time on by `ms`, running each timer that falls due (and letting its promises settle) in order. */
  async advance(ms: number) {
    const end = this.time + ms;
    for (;;) {
      await settle();
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = due.at;
      due.callback();
    }
    this.time = end;
    await settle();
  }
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

type Answer = number | 'network';

/** A network that answers each request with the next scripted answer (then 200), recording what was sent. */
function fakeNetwork(script: Answer[] = []) {
  const requests: { key: string; fixes: Fix[]; authorization: string }[] = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    const headers = init.headers as Record<string, string>;
    const fixes = (JSON.parse(String(init.body)) as { fixes: Fix[] }).fixes;
    requests.push({ key: headers['idempotency-key']!, fixes, authorization: headers['authorization']! });
    const answer = script.shift() ?? 200;
    if (answer === 'network') throw new TypeError('fetch failed');
    return new Response(
      JSON.stringify(answer === 200 ? { status: 'ok', accepted: 1, ignored: fixes.length - 1 } : {}),
      {
        status: answer,
        headers: answer === 503 ? { 'retry-after': '2' } : {},
      },
    );
  }) as unknown as typeof globalThis.fetch;
  return { fetch, requests };
}

/** A fix `metres` north of a fixed point, `seconds` after the clock's start. */
const fix = (seconds: number, metres = 0): Fix => ({
  latitude: 1.3 + metres / 111_195,
  longitude: 103.8,
  client_time_utc: new Date(Date.parse('2026-11-24T08:00:00Z') + seconds * 1000).toISOString(),
});

function uploader(network: ReturnType<typeof fakeNetwork>, clock: FakeClock, extra = {}) {
  return new LocationUploader({
    baseUrl: 'https://dispatch.example/',
    token: () => 'T',
    fetch: network.fetch,
    clock,
    ...extra,
  });
}

describe('LocationUploader', () => {
  it('keeps a sample that moved 30 m or came 30 s after the last kept, and drops the rest', () => {
    const up = uploader(fakeNetwork(), new FakeClock());
    expect(up.record(fix(0))).toBe('queued');
    expect(up.record(fix(5, 10))).toBe('filtered'); // 10 m, 5 s
    expect(up.record(fix(10, 31))).toBe('queued'); // moved 31 m
    expect(up.record(fix(20, 35))).toBe('filtered');
    expect(up.record(fix(40, 35))).toBe('queued'); // 30 s after the last kept
    expect(up.record(fix(39, 500))).toBe('filtered'); // older than the last kept
    expect(up.record({ ...fix(50), latitude: 91 })).toBe('invalid');
    expect(up.record({ ...fix(50), client_time_utc: 'yesterday' })).toBe('invalid');
    expect(up.stats).toMatchObject({ recorded: 3, filtered: 3 });
  });

  it('sends one X13 every upload interval, and at once when a batch fills, in order', async () => {
    const clock = new FakeClock();
    const network = fakeNetwork();
    const up = uploader(network, clock);
    await up.start();
    up.record(fix(0));
    up.record(fix(1, 40));
    await clock.advance(29_000);
    expect(network.requests).toHaveLength(0);
    await clock.advance(1_000);
    expect(network.requests.map((r) => r.fixes.length)).toEqual([2]);
    for (let i = 0; i < 10; i++) up.record(fix(40 + i, 100 + 40 * i));
    await settle();
    expect(network.requests.map((r) => r.fixes.length)).toEqual([2, 10]);
    const sent = network.requests.flatMap((r) => r.fixes.map((f) => f.client_time_utc));
    expect(sent).toEqual([...sent].sort());
    expect(network.requests.every((r) => r.authorization === 'Bearer T')).toBe(true);
    expect(up.pending).toHaveLength(0);
    up.stop();
  });

  it('resends a batch after a 503 (after Retry-After) and after no network, under the same Idempotency-Key', async () => {
    const clock = new FakeClock();
    const network = fakeNetwork([503, 'network', 'network']);
    const up = uploader(network, clock, { batchSize: 3 });
    await up.start();
    for (let i = 0; i < 3; i++) up.record(fix(i * 30));
    await settle();
    expect(network.requests).toHaveLength(1);
    // Fixes keep coming while the service is down: they wait, no request goes out before the resend is due.
    for (let i = 3; i < 9; i++) up.record(fix(i * 30));
    await clock.advance(1_900);
    expect(network.requests).toHaveLength(1);
    await clock.advance(100); // Retry-After: 2
    expect(network.requests).toHaveLength(2); // no network
    await clock.advance(2_000); // backoff after the second failure: 2 s
    expect(network.requests).toHaveLength(3); // no network again
    await clock.advance(3_900); // then 4 s
    expect(network.requests).toHaveLength(3);
    await clock.advance(100);
    expect(network.requests).toHaveLength(5); // the batch, then the six that waited
    const keys = network.requests.map((r) => r.key);
    expect(new Set(keys.slice(0, 4)).size).toBe(1);
    expect(network.requests[3]!.fixes).toEqual(network.requests[0]!.fixes);
    // Then what waited goes out, in order, under a key of its own.
    expect(network.requests.at(-1)!.key).not.toBe(keys[0]);
    const delivered = [network.requests[3]!, ...network.requests.slice(4)].flatMap((r) => r.fixes);
    expect(delivered.map((f) => f.client_time_utc)).toEqual(
      Array.from({ length: 9 }, (_, i) => fix(i * 30).client_time_utc),
    );
    expect(up.stats).toMatchObject({ sent: 9, retries: 3 });
    up.stop();
  });

  it('never loses an accepted fix: a full buffer refuses new samples, storage carries them across a restart', async () => {
    const clock = new FakeClock();
    let stored: Fix[] = [];
    const storage = {
      load: () => stored,
      save: (fixes: readonly Fix[]) => {
        stored = [...fixes];
      },
    };
    const down = fakeNetwork(Array.from({ length: 50 }, () => 'network' as const));
    const first = uploader(down, clock, { batchSize: 2, maxBuffered: 4, storage });
    await first.start();
    expect([0, 30, 60, 90, 120].map((s) => first.record(fix(s)))).toEqual([
      'queued',
      'queued',
      'queued',
      'queued',
      'full',
    ]);
    await clock.advance(10_000);
    expect(stored).toHaveLength(4);
    first.stop();
    // The app restarts with the network back: what was waiting is sent first.
    const up = fakeNetwork();
    const second = uploader(up, clock, { storage });
    await second.start();
    second.record(fix(150));
    await clock.advance(30_000);
    expect(up.requests.flatMap((r) => r.fixes).map((f) => f.client_time_utc)).toEqual(
      [0, 30, 60, 90, 150].map((s) => fix(s).client_time_utc),
    );
    expect(stored).toEqual([]);
    second.stop();
  });

  it('asks for the token before every request, so a refreshed token is used after a 401', async () => {
    const clock = new FakeClock();
    const network = fakeNetwork([401]);
    let token = 'old';
    const up = new LocationUploader({
      baseUrl: 'https://dispatch.example',
      token: () => token,
      fetch: network.fetch,
      clock,
      batchSize: 1,
    });
    await up.start();
    up.record(fix(0));
    await settle();
    token = 'new';
    await clock.advance(1_000);
    expect(network.requests.map((r) => r.authorization)).toEqual(['Bearer old', 'Bearer new']);
    expect(up.pending).toHaveLength(0);
    up.stop();
  });

  it('puts aside a batch the service refuses as malformed (400) and goes on with the next', async () => {
    const clock = new FakeClock();
    const network = fakeNetwork([400]);
    const up = uploader(network, clock, { batchSize: 1 });
    await up.start();
    up.record(fix(0));
    await settle();
    up.record(fix(30));
    await settle();
    expect(up.rejected).toEqual([[fix(0)]]);
    expect(up.stats).toMatchObject({ sent: 1, rejected: 1 });
    up.stop();
  });
});
