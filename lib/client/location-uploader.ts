/**
 * A driver app's location uploader (issue 27): it keeps the phone's position samples, keeps only those worth sending
 * (moved at least `minDistanceM`, or `minIntervalS` since the last one kept: the defaults of AWS's mobile tracking SDK
 * for Amazon Location), and sends them in order as X13 batches (`POST /v1/driver/locations`) every
 * `uploadIntervalS`, or as soon as `batchSize` are waiting. One batch is in flight at a time; a batch that got a 503,
 * a 429, a 5xx, a 401 (the token is asked for again) or no answer at all is sent again, the same fixes under the same
 * `Idempotency-Key`, after `Retry-After` or a growing pause, until the service answers it. A fix the uploader
 * accepted is never dropped: when `maxBuffered` are waiting, `record` refuses new samples instead (and says so).
 *
 * It needs only `fetch`, timers and the service's own distance function (`shared/locations/geo.ts`, pure code), so a
 * React Native app can use it as it is; `storage` lets the app keep the
 * waiting fixes across restarts (AsyncStorage, a file).
 *
 *   const uploader = new LocationUploader({ baseUrl, token: () => session.bearer });
 *   navigator.geolocation.watchPosition((p) => uploader.record({ latitude: p.coords.latitude, … }));
 */
import { UPLOADER_DEFAULTS } from '#lib/client/uploader-defaults';
import { distanceM } from '#shared/locations/geo';

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
  /** Send what is waiting this often (seconds). */
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

export type RecordOutcome = 'queued' | 'filtered' | 'invalid' | 'full';

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
  private lastKept: { fix: Fix; at: number } | undefined;
  private inFlight: { fixes: Fix[]; key: string } | undefined;
  private sending: Promise<void> | undefined;
  private timer: unknown;
  private retryTimer: unknown;
  private failures = 0;
  private retryAfterS: number | undefined;
  /** A resend is scheduled: neither a full batch nor the upload timer sends before it (no hammering an outage). */
  private retryPending = false;
  private stopped = false;
  private loaded = false;

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
    if (this.options.batchSize > MAX_FIXES_PER_REQUEST) {
      throw new RangeError(`batchSize must be at most ${MAX_FIXES_PER_REQUEST}`);
    }
  }

  /** Loads the fixes a previous run left waiting (with `storage`) and starts the upload timer. */
  async start(): Promise<void> {
    if (!this.loaded) {
      this.loaded = true;
      this.waiting.unshift(...((await this.options.storage?.load()) ?? []));
    }
    this.stopped = false;
    this.retryPending = false;
    this.schedule();
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
    this.lastKept = { fix, at };
    this.waiting.push(fix);
    this.stats.recorded++;
    void this.persist();
    if (this.waiting.length >= this.options.batchSize && !this.retryPending) void this.flush();
    return 'queued';
  }

  /** Sends what is waiting now (and whatever arrives meanwhile), resolving when nothing is left or a send failed. */
  flush(): Promise<void> {
    this.sending ??= this.drain().finally(() => {
      this.sending = undefined;
    });
    return this.sending;
  }

  /** Stops the timers. Waiting fixes stay (and stay in `storage`); `start` again to go on. */
  stop(): void {
    this.stopped = true;
    this.options.clock.clearTimeout(this.timer);
    this.options.clock.clearTimeout(this.retryTimer);
  }

  private filtered(): RecordOutcome {
    this.stats.filtered++;
    return 'filtered';
  }

  private schedule() {
    if (this.stopped) return;
    this.options.clock.clearTimeout(this.timer);
    this.timer = this.options.clock.setTimeout(() => {
      if (!this.retryPending) void this.flush();
      this.schedule();
    }, this.options.uploadIntervalS * 1000);
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (!this.inFlight) {
        if (this.waiting.length === 0) return;
        // One key per batch, kept across its resends: a batch the service stored but whose answer was lost is
        // answered again from the first, never stored twice.
        this.inFlight = { fixes: this.waiting.splice(0, MAX_FIXES_PER_REQUEST), key: randomKey() };
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
      this.options.onError?.({ status: 'network' });
      return this.failed(undefined);
    }
    if (response.ok) return 'sent';
    const detail = await response.text().catch(() => '');
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
        void this.flush();
      },
      (this.retryAfterS ?? backoff) * 1000,
    );
  }

  private async persist() {
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
