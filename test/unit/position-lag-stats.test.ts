/**
 * The position-lag bench's arithmetic (bench/position-lag-stats.ts) on fixed data: nearest-rank percentiles, and each
 * kept fix matched to the first frame that shows its driver at that fix or later, split into phone and server parts.
 */
import { describe, expect, it } from 'vitest';
import { type FrameEntry, matchLags, percentile, type SentFix, summarise } from '../../bench/position-lag-stats.ts';

describe('position lag: percentiles', () => {
  it('takes the nearest rank, so p99 of 100 values is the 99th and p50 of an even count the lower middle', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile([7, 3], 50)).toBe(3);
    expect(percentile([4], 99)).toBe(4);
    expect(percentile([4, 1, 9], 0)).toBe(1);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('position lag: matching frames to fixes', () => {
  // Driver a: three fixes kept at 0, 3 and 6 s, sent together at 10 s; X13 stores the newest (6 s) at 10.2 s, its
  // frame arrives at 11 s. Then a fix at 12 s, sent at 40 s, stored at 40.1 s, shown at 41.5 s.
  // Driver b: one fix at 5 s sent at 8 s and never shown (the run ended).
  const sent: SentFix[] = [
    { userId: 'a', clientMs: 0, postedMs: 10_000 },
    { userId: 'a', clientMs: 3000, postedMs: 10_000 },
    { userId: 'a', clientMs: 6000, postedMs: 10_000 },
    { userId: 'a', clientMs: 12_000, postedMs: 40_000 },
    { userId: 'b', clientMs: 5000, postedMs: 8000 },
  ];
  const entries: FrameEntry[] = [
    // Listed out of receipt order: the matcher orders by receipt.
    { userId: 'a', clientMs: 12_000, serverMs: 40_100, receivedMs: 41_500 },
    { userId: 'a', clientMs: 6000, serverMs: 10_200, receivedMs: 11_000 },
    // A position the bench never sent (another organisation's driver would be a leak).
    { userId: 'z', clientMs: 1000, serverMs: 2000, receivedMs: 3000 },
  ];
  const report = matchLags(sent, entries);

  it("ends every kept fix's lag at the first frame showing that fix or a newer one of its driver", () => {
    expect(report.fixes.map((s) => s.total)).toEqual([11_000, 8000, 5000, 29_500]);
    expect(report.undelivered).toBe(1);
  });

  it('splits each lag into the phone, X13 and the stream, which add up to it', () => {
    expect(report.fixes[0]).toEqual({ total: 11_000, phone: 10_000, request: 200, stream: 800, server: 1000 });
    expect(report.fixes[3]).toEqual({ total: 29_500, phone: 28_000, request: 100, stream: 1400, server: 1500 });
    for (const s of [...report.fixes, ...report.frames]) {
      expect(s.phone + s.request + s.stream).toBe(s.total);
      expect(s.request + s.stream).toBe(s.server);
    }
  });

  it('gives each frame position the lag of the fix it carries, and counts positions no fix explains', () => {
    expect(report.frames.map((s) => s.total)).toEqual([29_500, 5000]);
    expect(report.unmatched).toBe(1);
  });

  it('summarises a part in seconds', () => {
    expect(summarise(report.fixes, 'total')).toEqual({ p50: 8, p99: 29.5, max: 29.5 });
    expect(summarise(report.fixes, 'stream')).toEqual({ p50: 0.8, p99: 1.4, max: 1.4 });
  });

  it('counts a kept fix never sent as not shown, even when a frame of a newer fix exists', () => {
    const unsent = matchLags([{ userId: 'a', clientMs: 0 }], [entries[1]!]);
    expect(unsent).toMatchObject({ fixes: [], undelivered: 1 });
  });
});
