/**
 * The typed client's location uploader (issue 27.3) with a fake clock and a fake network: filtering, batching by time
 * and size, order, resends after a 503 or no network under the same Idempotency-Key, nothing accepted ever lost.
 */
import { describe, expect, it } from 'vitest';
import { type Fix, LocationUploader } from '../../lib/client/location-uploader.ts';
import { FakeClock, settle } from '../support/fake-clock.ts';

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

  it('sends a kept fix at once when the interval has passed, and at once when a batch fills, in order', async () => {
    const clock = new FakeClock();
    const network = fakeNetwork();
    const up = uploader(network, clock);
    await up.start();
    up.record(fix(0));
    await settle();
    expect(network.requests.map((r) => r.fixes.length)).toEqual([1]); // nothing sent yet: the first fix goes at once
    await clock.advance(1_000);
    up.record(fix(1, 40));
    await clock.advance(28_999);
    expect(network.requests).toHaveLength(1); // one request per interval
    await clock.advance(1); // the timer: the interval completes
    expect(network.requests.map((r) => r.fixes.length)).toEqual([1, 1]);
    for (let i = 0; i < 10; i++) up.record(fix(40 + i, 100 + 40 * i));
    await settle();
    expect(network.requests.map((r) => r.fixes.length)).toEqual([1, 1, 10]);
    const sent = network.requests.flatMap((r) => r.fixes.map((f) => f.client_time_utc));
    expect(sent).toEqual([...sent].sort());
    expect(network.requests.every((r) => r.authorization === 'Bearer T')).toBe(true);
    expect(up.pending).toHaveLength(0);
    up.stop();
  });

  it("sends a standing driver's kept fix the moment it is kept, once the interval has passed", async () => {
    const clock = new FakeClock();
    const network = fakeNetwork();
    const up = uploader(network, clock);
    await up.start();
    await clock.advance(5_000);
    expect(up.record(fix(5))).toBe('queued');
    await settle();
    expect(network.requests.map((r) => r.fixes)).toEqual([[fix(5)]]);
    for (const seconds of [35, 65, 95]) {
      await clock.advance(30_000);
      expect(up.record(fix(seconds))).toBe('queued'); // the time filter keeps one fix every 30 s
      await settle();
      expect(network.requests.at(-1)!.fixes).toEqual([fix(seconds)]); // sent with no wait
    }
    // The GPS time of a fix may run a moment ahead of the phone's clock: kept 0.4 s before the interval completes, it
    // goes when it completes (not an interval later).
    await clock.advance(29_600);
    expect(up.record(fix(125))).toBe('queued');
    await settle();
    expect(network.requests).toHaveLength(4);
    await clock.advance(400);
    expect(network.requests.map((r) => r.fixes)).toEqual([[fix(5)], [fix(35)], [fix(65)], [fix(95)], [fix(125)]]);
    expect(up.pending).toHaveLength(0);
    up.stop();
  });

  it("sends a moving driver's batch with the fix that completes the interval", async () => {
    const clock = new FakeClock();
    const network = fakeNetwork();
    const up = uploader(network, clock);
    await up.start();
    up.record(fix(0));
    await settle();
    expect(network.requests).toHaveLength(1);
    // 10 m/s: the distance filter keeps a fix every 4 s (40 m).
    for (let seconds = 4; seconds <= 28; seconds += 4) {
      await clock.advance(4_000);
      expect(up.record(fix(seconds, seconds * 10))).toBe('queued');
    }
    await clock.advance(3_999);
    expect(network.requests).toHaveLength(1);
    await clock.advance(1); // 32 s: the fix kept after the interval completed leaves with the seven that waited
    up.record(fix(32, 320));
    await settle();
    expect(network.requests.map((r) => r.fixes)).toEqual([
      [fix(0)],
      [4, 8, 12, 16, 20, 24, 28, 32].map((s) => fix(s, s * 10)),
    ]);
    up.stop();
  });

  it('never sends more than one X13 per upload interval except for a full batch, and a fix due goes when kept', async () => {
    const clock = new FakeClock();
    const network = fakeNetwork();
    const posted: { at: number; fixes: number }[] = [];
    const timed = (async (url: string, init: RequestInit) => {
      posted.push({ at: clock.now(), fixes: (JSON.parse(String(init.body)) as { fixes: Fix[] }).fixes.length });
      return network.fetch(url, init);
    }) as unknown as typeof globalThis.fetch;
    const up = uploader(network, clock, { fetch: timed, batchSize: 8 });
    await up.start();
    // A driver who stops and goes: fixes kept 1 to 13 s apart (the distance filter), for ten minutes.
    const kept: { at: number; dueAtOnce: boolean }[] = [];
    let seconds = 0;
    let step = 0;
    while (seconds < 600) {
      step++;
      const wait = 1 + ((step * 7) % 13);
      await clock.advance(wait * 1000);
      seconds += wait;
      const last = posted.at(-1);
      const dueAtOnce = !last || clock.now() - last.at >= 30_000;
      expect(up.record(fix(seconds, seconds * 40))).toBe('queued');
      await settle();
      kept.push({ at: clock.now(), dueAtOnce });
      if (dueAtOnce) expect(posted.at(-1)!.at).toBe(clock.now()); // due: sent the moment it was kept
    }
    await clock.advance(60_000);
    expect(up.pending).toHaveLength(0);
    expect(posted.length).toBeGreaterThan(10);
    for (const [i, request] of posted.entries()) {
      if (i === 0 || request.fixes >= 8) continue;
      expect(request.at - posted[i - 1]!.at).toBeGreaterThanOrEqual(30_000);
    }
    // And no kept fix waited more than the interval.
    const sentAt = posted.flatMap((request) => Array.from({ length: request.fixes }, () => request.at));
    expect(sentAt).toHaveLength(kept.length);
    expect(Math.max(...kept.map((k, i) => sentAt[i]! - k.at))).toBeLessThanOrEqual(30_000);
    expect(kept.some((k) => k.dueAtOnce) && kept.some((k) => !k.dueAtOnce)).toBe(true);
    up.stop();
  });

  it('sends what waits on the timer when no fix follows (the GPS stopped), at most an interval after it was kept', async () => {
    const clock = new FakeClock();
    const network = fakeNetwork();
    const up = uploader(network, clock);
    const sentAt: number[] = [];
    const at = () => (clock.now() - Date.parse('2026-11-24T08:00:00Z')) / 1000;
    const step = async (seconds: number) => {
      const before = network.requests.length;
      await clock.advance(seconds * 1000 - (clock.now() - Date.parse('2026-11-24T08:00:00Z')));
      if (network.requests.length > before) sentAt.push(at());
    };
    await up.start();
    up.record(fix(0));
    await settle();
    // No fix due before the interval completes: the one waiting goes when it does.
    await step(10);
    up.record(fix(10, 40));
    await step(29.999);
    expect(network.requests).toHaveLength(1);
    await step(30);
    expect(network.requests.map((r) => r.fixes)).toEqual([[fix(0)], [fix(10, 40)]]);
    // A driver keeping a fix every 4 s whose GPS stops at 58 s: the batch waits for the fix due at 62 s, a second
    // longer, then goes without it.
    for (let seconds = 34; seconds <= 58; seconds += 4) {
      await step(seconds);
      up.record(fix(seconds, seconds * 40));
    }
    await step(62.999);
    expect(network.requests).toHaveLength(2);
    await step(63);
    expect(network.requests.at(-1)!.fixes).toEqual([34, 38, 42, 46, 50, 54, 58].map((s) => fix(s, s * 40)));
    // Fixes 24 s apart: the first waits an interval, not longer (95 s, before the next is due at 114 s).
    await step(65);
    up.record(fix(65, 65 * 40));
    await step(89);
    up.record(fix(89, 89 * 40));
    await step(94.999);
    expect(network.requests).toHaveLength(3);
    await step(95);
    expect(network.requests.at(-1)!.fixes).toEqual([fix(65, 65 * 40), fix(89, 89 * 40)]);
    // Then nothing is left and no request goes out.
    await step(300);
    expect(network.requests).toHaveLength(4);
    expect(sentAt).toEqual([30, 63, 95]);
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

  it('with storage, sends and saves nothing before start has loaded the last run’s fixes, which go first', async () => {
    const clock = new FakeClock();
    let stored: Fix[] = [fix(0), fix(30)];
    let release: (fixes: Fix[]) => void = () => {};
    const storage = {
      load: () => new Promise<Fix[]>((resolve) => (release = resolve)),
      save: (fixes: readonly Fix[]) => {
        stored = [...fixes];
      },
    };
    const network = fakeNetwork();
    const up = uploader(network, clock, { storage });
    const started = up.start();
    // The app records a sample while the storage is still being read.
    expect(up.record(fix(60))).toBe('queued');
    await settle();
    expect(network.requests).toHaveLength(0);
    expect(stored).toEqual([fix(0), fix(30)]); // not overwritten by the new fix alone
    release(stored);
    await started;
    await settle();
    expect(network.requests.flatMap((r) => r.fixes)).toEqual([fix(0), fix(30), fix(60)]);
    expect(stored).toEqual([]);
    up.stop();
  });

  it('after a stop and a start, resends the batch left in flight at once, under its key, then what waited', async () => {
    const clock = new FakeClock();
    const network = fakeNetwork(['network']);
    const up = uploader(network, clock);
    await up.start();
    up.record(fix(0));
    await settle();
    await clock.advance(500);
    up.record(fix(1, 40));
    up.stop(); // the resend was due in 1 s
    await clock.advance(60_000);
    expect(network.requests).toHaveLength(1);
    await up.start();
    await settle();
    expect(network.requests.map((r) => r.fixes)).toEqual([[fix(0)], [fix(0)]]);
    expect(network.requests[1]!.key).toBe(network.requests[0]!.key);
    await clock.advance(30_000); // the resend was a request: what waited goes an interval after it
    expect(network.requests.map((r) => r.fixes)).toEqual([[fix(0)], [fix(0)], [fix(1, 40)]]);
    // `flush` sends what waits at once, whatever the interval (the end of a shift).
    await clock.advance(1_000);
    up.record(fix(32, 400));
    await up.flush();
    expect(network.requests.at(-1)!.fixes).toEqual([fix(32, 400)]);
    expect(up.pending).toHaveLength(0);
    up.stop();
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

describe('LocationUploader used as docs/driver-app.md shows it (issue 55 item 2)', () => {
  const memory = (stored: Fix[] = []) => ({ load: () => [...stored], save: () => undefined });

  it('with storage and no start(), the first record starts it: the fixes go, and flush says what it sent', async () => {
    const network = fakeNetwork();
    const up = uploader(network, new FakeClock(), { storage: memory([fix(0)]) });
    expect(up.record(fix(40, 100))).toBe('queued');
    await settle();
    // The stored fix goes first, then the new one.
    expect(network.requests.flatMap((r) => r.fixes)).toEqual([fix(0), fix(40, 100)]);
    expect(await up.flush()).toEqual({ sent: 0, pending: 0, reason: 'nothing_waiting' });
    up.stop();
  });

  it('flush starts it too, and says why nothing was sent', async () => {
    const clock = new FakeClock();
    const none = uploader(fakeNetwork(), clock, { storage: memory() });
    expect(await none.flush()).toEqual({ sent: 0, pending: 0, reason: 'nothing_recorded' });
    none.stop();

    const down = uploader(fakeNetwork([503]), clock, { storage: memory() });
    down.record(fix(0));
    const failed = await down.flush();
    expect(failed).toMatchObject({ sent: 0, pending: 1, reason: 'send_failed' });
    expect(failed.detail).toMatch(/^503/);
    down.stop();

    const broken = uploader(fakeNetwork(), clock, {
      storage: { load: () => Promise.reject(new Error('disk gone')), save: () => undefined },
    });
    broken.record(fix(0));
    expect(await broken.flush()).toEqual({ sent: 0, pending: 1, reason: 'storage_failed', detail: 'disk gone' });
  });

  it('after stop(), a record does not start it again (start does)', async () => {
    const network = fakeNetwork();
    const up = uploader(network, new FakeClock());
    await up.start();
    up.stop();
    up.record(fix(0));
    await settle();
    expect(network.requests).toHaveLength(0);
    await up.start();
    await settle();
    expect(network.requests).toHaveLength(1);
    up.stop();
  });
});
