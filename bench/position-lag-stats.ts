/**
 * The position-lag bench's arithmetic (bench/position-lag.ts), kept pure so a unit test can check it on fixed data
 * (test/unit/position-lag-stats.test.ts). All times are milliseconds on one clock (the bench, the uploaders, the host
 * and the subscriber share one process).
 */

/** A fix the uploader kept, and when its X13 was first sent (undefined: never sent). */
export interface SentFix {
  userId: string;
  /** The fix's `client_time_utc`, as milliseconds. */
  clientMs: number;
  /** When the uploader first posted the X13 holding it. */
  postedMs?: number;
}

/** One driver in one `driver.location` frame, as the subscriber received it. */
export interface FrameEntry {
  userId: string;
  /** The position's `client_time_utc`, as milliseconds. */
  clientMs: number;
  /** The position's `server_time` (the service's stamp when X13 stored it), as milliseconds. */
  serverMs: number;
  receivedMs: number;
}

/** Where one lag went: waiting on the phone, X13 until the service stored it, the stream and the fan-out. */
export interface LagSample {
  total: number;
  /** Client time → the X13 that carried it was sent (the uploader's buffer). */
  phone: number;
  /** X13 sent → the service stamped the stored position (`server_time`). */
  request: number;
  /** `server_time` → the frame at the subscriber (stream poll or batching window, fan-out, WebSocket). */
  stream: number;
  /** X13 sent → the frame: `request` + `stream`. */
  server: number;
}

export interface LagReport {
  /** Every kept fix → the first frame showing it or a newer position of its driver: what a dispatcher waits. */
  fixes: LagSample[];
  /** Every frame entry → the fix it carries: the age of the position the frame shows. */
  frames: LagSample[];
  /** Kept fixes no frame ever covered (the run ended first, or a frame was lost). */
  undelivered: number;
  /** Frame entries whose position is no fix the bench sent (another org's driver would be a leak). */
  unmatched: number;
}

/** Nearest-rank percentile (p in 0–100); NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

const key = (userId: string, clientMs: number) => `${userId} ${clientMs}`;

/**
 * Matches frames to fixes per driver. A fix's lag ends at the first frame (by receipt) that shows its driver at the
 * fix's client time or later: X13 stores only a batch's newest fix, so the older fixes of a batch are shown by the
 * frame of the newest (their phone part is the same wait for the same upload, their client time earlier). A frame
 * entry's lag is that of the fix it carries. The server parts use the carried position's `server_time`.
 */
export function matchLags(sent: readonly SentFix[], entries: readonly FrameEntry[]): LagReport {
  const byFix = new Map<string, SentFix>();
  for (const fix of sent) byFix.set(key(fix.userId, fix.clientMs), fix);
  const byDriver = new Map<string, FrameEntry[]>();
  for (const entry of [...entries].sort((a, b) => a.receivedMs - b.receivedMs)) {
    const list = byDriver.get(entry.userId) ?? [];
    list.push(entry);
    byDriver.set(entry.userId, list);
  }

  const frames: LagSample[] = [];
  let unmatched = 0;
  for (const entry of entries) {
    const fix = byFix.get(key(entry.userId, entry.clientMs));
    if (!fix || fix.postedMs === undefined) {
      unmatched++;
      continue;
    }
    frames.push(sample(fix.clientMs, fix.postedMs, entry));
  }

  const fixes: LagSample[] = [];
  let undelivered = 0;
  for (const fix of sent) {
    const shown = byDriver.get(fix.userId)?.find((entry) => entry.clientMs >= fix.clientMs);
    if (!shown || fix.postedMs === undefined) {
      undelivered++;
      continue;
    }
    fixes.push(sample(fix.clientMs, fix.postedMs, shown));
  }
  return { fixes, frames, undelivered, unmatched };
}

function sample(clientMs: number, postedMs: number, entry: FrameEntry): LagSample {
  return {
    total: entry.receivedMs - clientMs,
    phone: postedMs - clientMs,
    request: entry.serverMs - postedMs,
    stream: entry.receivedMs - entry.serverMs,
    server: entry.receivedMs - postedMs,
  };
}

/** p50/p99/max of one part of the samples, in seconds. */
export function summarise(samples: readonly LagSample[], part: keyof LagSample) {
  const values = samples.map((s) => s[part]);
  return {
    p50: percentile(values, 50) / 1000,
    p99: percentile(values, 99) / 1000,
    max: values.length ? Math.max(...values) / 1000 : Number.NaN,
  };
}
