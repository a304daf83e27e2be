/**
 * A driver app's location uploader (issue 27): it keeps the phone's position samples, keeps only those worth sending
 * (moved at least `minDistanceM`, or `minIntervalS` since the last one kept: the defaults of AWS's mobile tracking SDK
 * for Amazon Location), and sends them in order as X13 batches (`POST /v1/driver/locations`).
 *
 * When it sends (at most one request per `uploadIntervalS`, except for a full batch or a resend):
 * - a kept fix goes out the moment it is kept if `uploadIntervalS` has passed since the last request began: a standing
 *   driver's one fix every 30 s is sent at once, and a moving driver's batch leaves with the fix that completes the
 *   interval (it used to wait for a free-running timer, up to a whole interval);
 * - at once when `batchSize` fixes wait;
 * - on a timer when no fix comes to send them (the GPS stopped): when the interval completes, or, if the driver keeps a
 *   fix every few seconds, when its next fix was due (its usual spacing + a second) so the batch can leave with it;
 *   never later than `uploadIntervalS` after the oldest waiting fix was kept.
 *
 * One batch is in flight at a time; a batch that got a 503, a 429, a 5xx, a 401 (the token is asked for again) or no
 * answer at all is sent again, the same fixes under the same `Idempotency-Key`, after `Retry-After` or a growing pause,
 * until the service answers it (nothing else is sent before the resend is due). A fix the uploader accepted is never
 * dropped: when `maxBuffered` are waiting, `record` refuses new samples instead (and says so). `flush()` sends what
 * waits now, whatever the interval.
 *
 * It starts itself on the first `record()` or `flush()` (with `storage`, once the last run's fixes are loaded: they go
 * first), so `new LocationUploader(…)` then `record(…)` sends, as docs/driver-app.md shows; `start()` is there to load
 * the stored fixes before the first sample (an app opening with no GPS yet) and to go on after `stop()`. `flush()`
 * answers what it sent and, when fixes still wait or nothing was there to send, why (`reason`, `detail`).
 *
 * It needs only `fetch`, timers and the service's own distance function (`shared/locations/geo.ts`, pure code), so a
 * React Native app can use it as it is; `storage` lets the app keep the waiting fixes across restarts (AsyncStorage,
 * a file).
 *
 *   const uploader = new LocationUploader({ baseUrl, token: () => session.bearer, storage });
 *   navigator.geolocation.watchPosition((p) => uploader.record({ latitude: p.coords.latitude, … })); // starts it
 *   const { sent, reason } = await uploader.flush(); // the end of a shift: `reason` says why nothing went
 */

import { distanceM } from './geo.ts';
import { UPLOADER_DEFAULTS } from './uploader-defaults.ts';

/** A fix as L1 takes it (contract 4.4). */
export interface Fix {
  latitude: number;
  longitude: number;
  client_time_utc: string;
  altitude?: number | null;
  client_timezone?: string | null;
  device_id?: string | null;
}

export interface UploaderClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface UploaderStorage {
  load(): Promise<Fix[]> | Fix[];
  save(fixes: readonly Fix[]): Promise<void> | void;
}

export interface UploaderOptions {
  baseUrl: string;
  /** The caller's bearer token; asked for before every request, so a refreshed token is used at once. */
  token: () => string | Promise<string>;
  /** Keep a sample that moved at least this far from the last one kept (metres). Defaults: lib/client/uploader-defaults.ts. */
  minDistanceM?: number;
  /** ... or that came at least this long after it (seconds). */
  minIntervalS?: number;
  /** At most one request this often (seconds), except for a full batch; a kept fix waits at most this long. */
  uploadIntervalS?: number;
  /** Send at once when this many fixes wait (X13 takes up to 100). */
  batchSize?: number;
  /** Refuse new samples while this many wait to be sent (default 10 000: over 80 hours of a driver standing still). */
  maxBuffered?: number;
  /** The pause before the first resend without a `Retry-After`, doubled each time up to `maxRetryDelayS` (seconds;
   * defaults 1 and 60). */
  retryDelayS?: number;
  maxRetryDelayS?: number;
  fetch?: typeof globalThis.fetch;
  clock?: UploaderClock;
  storage?: UploaderStorage;
  /** Told of every answer that was not a success (the batch is kept and sent again, except a 400: see `rejected`). */
  onError?: (problem: { status: number | 'network'; detail?: string }) => void;
}

/** X13 takes at most this many fixes a request. */
export const MAX_FIXES_PER_REQUEST = 100;

/**
 * The slack of the send timer (ms), about a GPS sample's period: a fix kept this close before the upload interval
 * completes goes when it completes (a standing driver's fix, kept by its GPS time 30 s after the last, may reach the
 * uploader a moment before 30 s of the phone's clock have passed since the last request); and a moving driver's next
 * fix is waited for until this long after its usual spacing.
 */
const SLACK_MS = 1000;

export type RecordOutcome = 'queued' | 'filtered' | 'invalid' | 'full';

/**
 * What `flush()` did: `sent` fixes reached the service during it, `pending` still wait. `reason` says why something
 * was not sent: `nothing_recorded` (no fix was ever kept: `record` was not called, or every sample was `invalid`),
 * `nothing_waiting` (everything kept was sent before), `send_failed` (the service or the network refused the batch:
 * `detail`; it is sent again by itself), `storage_failed` (`storage.load` threw: `detail`; nothing is sent, so as not
 * to overwrite what the last run kept).
 */
export interface FlushResult {
  sent: number;
  pending: number;
  reason?: 'nothing_recorded' | 'nothing_waiting' | 'send_failed' | 'storage_failed';
  detail?: string;
}

export interface UploaderStats {
  recorded: number;
  filtered: number;
  sent: number;
  requests: number;
  retries: number;
  /** Fixes refused by the service as malformed (400): kept in `rejected`, never silently dropped. */
  rejected: number;
}

const realClock: UploaderClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class LocationUploader {
  readonly stats: UploaderStats = { recorded: 0, filtered: 0, sent: 0, requests: 0, retries: 0, rejected: 0 };
  /** Batches the service refused as malformed (a 400): the app may inspect them; they are not sent again. */
  readonly rejected: Fix[][] = [];
  private readonly options: Required<Omit<UploaderOptions, 'storage' | 'onError'>> &
    Pick<UploaderOptions, 'storage' | 'onError'>;
  private readonly waiting: Fix[] = [];
  /** When each waiting fix was kept (the clock's ms), in step with `waiting`. */
  private readonly keptAt: number[] = [];
  /** When the last request began (the clock's ms): the rate bound and the moment a kept fix may go. */
  private lastRequestAt = Number.NEGATIVE_INFINITY;
  /** `flush()` was called: send everything now, whatever the interval. */
  private flushing = false;
  private lastKept: { fix: Fix; at: number } | undefined;
  /** The time between the last two fixes kept (the clock's ms): when the next one may be expected. */
  private keptSpacingMs = Number.POSITIVE_INFINITY;
  private lastKeptClock: number | undefined;
  private inFlight: { fixes: Fix[]; key: string } | undefined;
  private sending: Promise<void> | undefined;
  private timer: unknown;
  private retryTimer: unknown;
  private failures = 0;
  private retryAfterS: number | undefined;
  /** A resend is scheduled: neither a full batch nor the upload timer sends before it (no hammering an outage). */
  private retryPending = false;
  private stopped = false;
  /** `stop()` was called: a later `record` does not start it again (only `start` does). */
  private stoppedByApp = false;
  /** Why the last request failed (its status and detail), for `flush`'s answer. */
  private lastFailure: string | undefined;
  /** What `storage.load` threw, when it did. */
  private loadFailure: string | undefined;
  /** The fixes `storage` kept are in `waiting` (true from the start without storage): nothing is sent or saved before. */
  private loaded: boolean;
  private loading: Promise<void> | undefined;

  constructor(options: UploaderOptions) {
    this.options = {
      minDistanceM: UPLOADER_DEFAULTS.distanceFilterM,
      minIntervalS: UPLOADER_DEFAULTS.timeFilterS,
      uploadIntervalS: UPLOADER_DEFAULTS.uploadIntervalS,
      batchSize: UPLOADER_DEFAULTS.maxFixesPerUpload,
      maxBuffered: 10_000,
      retryDelayS: 1,
      maxRetryDelayS: 60,
      fetch: globalThis.fetch.bind(globalThis),
      clock: realClock,
      ...options,
    };
    this.loaded = this.options.storage === undefined;
    if (this.options.batchSize > MAX_FIXES_PER_REQUEST) {
      throw new RangeError(`batchSize must be at most ${MAX_FIXES_PER_REQUEST}`);
    }
  }

  /**
   * Loads the fixes a previous run left waiting (with `storage`; they may go at once) and starts sending. The first
   * `record` or `flush` does it by itself; call it to load before the first sample, or to go on after `stop()`.
   */
  async start(): Promise<void> {
    this.stoppedByApp = false;
    // Fixes recorded before the stored ones are loaded wait behind them (order), and are saved only with them (a save
    // before the load would overwrite what the last run kept).
    this.loading ??= (async () => {
      const stored = (await this.options.storage?.load()) ?? [];
      this.waiting.unshift(...stored);
      this.keptAt.unshift(...stored.map(() => this.options.clock.now()));
      this.loaded = true;
      await this.persist();
    })();
    await this.loading;
    // A `stop()` while the stored fixes were loading holds.
    this.stopped = this.stoppedByApp;
    if (this.stopped) return;
    this.retryPending = false;
    this.next();
  }

  /** Fixes accepted and not yet confirmed by the service, oldest first. */
  get pending(): readonly Fix[] {
    return this.inFlight ? [...this.inFlight.fixes, ...this.waiting] : [...this.waiting];
  }

  /**
   * Offers a position sample. `queued`: kept and will be sent; `filtered`: too close in place and time to the last one
   * kept; `invalid`: not a fix L1 would take (nothing kept); `full`: `maxBuffered` fixes wait already (nothing kept).
   */
  record(fix: Fix): RecordOutcome {
    if (!isValidFix(fix)) return 'invalid';
    const at = Date.parse(fix.client_time_utc);
    if (this.lastKept) {
      if (at <= this.lastKept.at) return this.filtered();
      const moved = distanceM(this.lastKept.fix, fix);
      if (moved < this.options.minDistanceM && at - this.lastKept.at < this.options.minIntervalS * 1000) {
        return this.filtered();
      }
    }
    if (this.pending.length >= this.options.maxBuffered) return 'full';
    this.autoStart();
    this.lastKept = { fix, at };
    this.waiting.push(fix);
    const now = this.options.clock.now();
    if (this.lastKeptClock !== undefined) this.keptSpacingMs = now - this.lastKeptClock;
    this.lastKeptClock = now;
    this.keptAt.push(now);
    this.stats.recorded++;
    void this.persist();
    this.next();
    return 'queued';
  }

  /**
   * Sends what is waiting now, whatever the interval (and whatever arrives meanwhile), resolving when nothing is left or
   * a send failed: for the app's own moments (the end of a shift), not a loop.
   */
  async flush(): Promise<FlushResult> {
    const before = this.stats.sent;
    this.autoStart();
    await this.loading?.catch(() => undefined);
    this.flushing = true;
    await this.kick();
    const sent = this.stats.sent - before;
    const pending = this.pending.length;
    if (this.loadFailure !== undefined) return { sent, pending, reason: 'storage_failed', detail: this.loadFailure };
    if (pending > 0 && this.failures > 0) return { sent, pending, reason: 'send_failed', detail: this.lastFailure };
    if (sent === 0 && pending === 0) {
      return { sent, pending, reason: this.stats.recorded === 0 ? 'nothing_recorded' : 'nothing_waiting' };
    }
    return { sent, pending };
  }

  /** Stops the timers (a request under way finishes). Waiting fixes stay (and stay in `storage`); `start` again to go on. */
  stop(): void {
    this.stoppedByApp = true;
    this.stopped = true;
    this.options.clock.clearTimeout(this.timer);
    this.options.clock.clearTimeout(this.retryTimer);
  }

  /** The first `record` or `flush` starts it (loading `storage`) unless the app stopped it; a failed load is kept. */
  private autoStart() {
    if (this.loading || this.stoppedByApp) return;
    this.start().catch((error: unknown) => {
      this.loadFailure = error instanceof Error ? error.message : String(error);
    });
  }

  private filtered(): RecordOutcome {
    this.stats.filtered++;
    return 'filtered';
  }

  private kick(): Promise<void> {
    if (!this.loaded) return Promise.resolve();
    this.sending ??= this.drain().finally(() => {
      this.sending = undefined;
      this.flushing = false;
      this.next();
    });
    return this.sending;
  }

  /** May the waiting fixes go now: a full batch, or the interval has passed since the last request began. */
  private ready(): boolean {
    return (
      this.waiting.length >= this.options.batchSize ||
      this.options.clock.now() - this.lastRequestAt >= this.options.uploadIntervalS * 1000
    );
  }

  /**
   * Sends what waits if it may go now; otherwise sets the timer for when it must. When the interval since the last
   * request completes, unless the driver's next fix is due a little after that (it keeps fixes every few seconds: the
   * batch waits to leave with it, up to its usual spacing + `SLACK_MS`), and never later than an interval after the
   * oldest waiting fix was kept. Nothing while a resend is due (its timer sends) or while a batch is in flight (its
   * end comes back here).
   */
  private next() {
    this.options.clock.clearTimeout(this.timer);
    if (this.stopped || this.retryPending || !this.loaded) return;
    // A batch left in flight by `stop` (its resend was due): it goes first, now.
    if (this.inFlight && !this.sending) {
      void this.kick();
      return;
    }
    if (this.waiting.length === 0) return;
    if (this.ready()) {
      void this.kick();
      return;
    }
    if (this.sending) return;
    const now = this.options.clock.now();
    const intervalMs = this.options.uploadIntervalS * 1000;
    const completes = this.lastRequestAt + intervalMs;
    const newest = this.keptAt.at(-1)!;
    const nextFixBy = Math.min(this.keptAt[0]! + intervalMs, newest + this.keptSpacingMs + SLACK_MS);
    const at = completes - newest <= SLACK_MS ? completes : Math.max(completes, nextFixBy);
    this.timer = this.options.clock.setTimeout(() => this.next(), Math.max(0, at - now));
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (!this.inFlight) {
        if (this.waiting.length === 0 || (!this.flushing && !this.ready())) return;
        // One key per batch, kept across its resends: a batch the service stored but whose answer was lost is
        // answered again from the first, never stored twice.
        this.inFlight = { fixes: this.waiting.splice(0, MAX_FIXES_PER_REQUEST), key: randomKey() };
        this.keptAt.splice(0, this.inFlight.fixes.length);
      }
      const outcome = await this.send(this.inFlight);
      if (outcome === 'retry') {
        this.scheduleRetry();
        return;
      }
      this.failures = 0;
      if (outcome === 'rejected') {
        this.rejected.push(this.inFlight.fixes);
        this.stats.rejected += this.inFlight.fixes.length;
      } else {
        this.stats.sent += this.inFlight.fixes.length;
      }
      this.inFlight = undefined;
      await this.persist();
    }
  }

  private async send(batch: { fixes: Fix[]; key: string }): Promise<'sent' | 'rejected' | 'retry'> {
    this.stats.requests++;
    this.lastRequestAt = this.options.clock.now();
    if (this.failures > 0) this.stats.retries++;
    let response: Response;
    try {
      response = await this.options.fetch(`${this.options.baseUrl.replace(/\/$/, '')}/v1/driver/locations`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await this.options.token()}`,
          'content-type': 'application/json',
          'idempotency-key': batch.key,
        },
        body: JSON.stringify({ fixes: batch.fixes }),
      });
    } catch {
      this.lastFailure = 'no answer from the service (network)';
      this.options.onError?.({ status: 'network' });
      return this.failed(undefined);
    }
    if (response.ok) return 'sent';
    const detail = await response.text().catch(() => '');
    this.lastFailure = `${response.status}${detail ? `: ${detail}` : ''}`;
    this.options.onError?.({ status: response.status, detail });
    // A 400 names a fix the service will never take (the uploader checks fixes as L1 does, so this is a contract
    // change or a bug): keeping it would block every later fix. A 409 with this key is another body under the key,
    // which cannot happen here; any other answer is worth sending again.
    if (response.status === 400 || response.status === 413 || response.status === 422) return 'rejected';
    const retryAfter = Number(response.headers.get('retry-after'));
    return this.failed(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
  }

  private failed(retryAfterS: number | undefined): 'retry' {
    this.failures++;
    this.retryAfterS = retryAfterS;
    return 'retry';
  }

  private scheduleRetry() {
    if (this.stopped) return;
    const backoff = Math.min(this.options.maxRetryDelayS, this.options.retryDelayS * 2 ** (this.failures - 1));
    this.options.clock.clearTimeout(this.retryTimer);
    this.retryPending = true;
    this.retryTimer = this.options.clock.setTimeout(
      () => {
        this.retryPending = false;
        void this.kick();
      },
      (this.retryAfterS ?? backoff) * 1000,
    );
  }

  private async persist() {
    if (!this.loaded) return;
    await this.options.storage?.save(this.pending);
  }
}

function isValidFix(fix: Fix): boolean {
  return (
    typeof fix.latitude === 'number' &&
    fix.latitude >= -90 &&
    fix.latitude <= 90 &&
    typeof fix.longitude === 'number' &&
    fix.longitude >= -180 &&
    fix.longitude <= 180 &&
    typeof fix.client_time_utc === 'string' &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(fix.client_time_utc) &&
    Number.isFinite(Date.parse(fix.client_time_utc))
  );
}

function randomKey(): string {
  return globalThis.crypto.randomUUID();
}
