/**
 * A driver app's queue of task events (issue 38, contract 4.8 X20), beside the location uploader: the app records each
 * event when it happens, with or without a network, and the queue sends them in the order recorded, one at a time,
 * each waiting for the answer to the one before (the service judges events in arrival order, so a delivery must not
 * overtake its pickup).
 *
 * - An event is recorded with its `happened_at_utc` and a fresh `Idempotency-Key`; both stay the same on every resend,
 *   so an event whose answer was lost is recorded once (the service answers the repeat 200).
 * - A 503, a 429, a 5xx, a 401 (the token is asked for again) or no answer at all: the same event is sent again after
 *   `Retry-After` or a growing pause, and nothing behind it goes first.
 * - A 400, 404 or 409 is the service's final word on that event (a move the task does not allow, a proof that does not
 *   match): it is moved to `rejected` (and `onRejected` is told) so the app can show it; the queue goes on.
 * - `storage` keeps the waiting events across restarts (AsyncStorage, a file): nothing recorded is lost.
 *
 *   const events = new TaskEventQueue({ baseUrl, token: () => session.bearer, storage });
 *   await events.start();
 *   events.record('RS-1', 'T-17', { type: 'picked_up', happened_at_utc: new Date().toISOString() });
 */
import type { UploaderClock } from './location-uploader.ts';

/** X20's body (contract 4.8). */
export interface TaskEventBody {
  type: 'arrived' | 'picked_up' | 'delivered' | 'failed';
  happened_at_utc: string;
  latitude?: number;
  longitude?: number;
  failure_reason?: 'recipient_absent' | 'address_not_found' | 'refused' | 'damaged' | 'access_denied' | 'other';
  note?: string;
  recipient_name?: string;
  proof_ids?: string[];
}

/** One event waiting to be sent: where it goes, what it says, and the key all its attempts carry. */
export interface QueuedTaskEvent {
  key: string;
  runsheet_id: string;
  task_id: string;
  event: TaskEventBody;
}

export interface TaskEventStorage {
  load(): Promise<QueuedTaskEvent[]> | QueuedTaskEvent[];
  save(events: readonly QueuedTaskEvent[]): Promise<void> | void;
}

export interface TaskEventQueueOptions {
  baseUrl: string;
  /** The driver's bearer token; asked for before every request. */
  token: () => string | Promise<string>;
  /** The pause before the first resend without a `Retry-After`, doubled each time up to `maxRetryDelayS` (seconds). */
  retryDelayS?: number;
  maxRetryDelayS?: number;
  fetch?: typeof globalThis.fetch;
  clock?: UploaderClock;
  storage?: TaskEventStorage;
  /** An event the service refused for good (400, 404, 409), with its problem. */
  onRejected?: (event: QueuedTaskEvent, problem: { status: number; detail?: string }) => void;
  /** Every answer that was not final (the event is sent again). */
  onError?: (problem: { status: number | 'network'; detail?: string }) => void;
}

export interface TaskEventStats {
  recorded: number;
  /** Answered 201 (recorded) or 200 (recorded already: a resend whose first answer was lost). */
  sent: number;
  duplicates: number;
  requests: number;
  retries: number;
  rejected: number;
}

const realClock: UploaderClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

const FINAL = new Set([400, 404, 409]);

export class TaskEventQueue {
  readonly stats: TaskEventStats = { recorded: 0, sent: 0, duplicates: 0, requests: 0, retries: 0, rejected: 0 };
  /** Events the service refused for good, with its answer: shown to the driver, never sent again. */
  readonly rejected: { event: QueuedTaskEvent; status: number; detail?: string }[] = [];
  private readonly options: Required<Omit<TaskEventQueueOptions, 'storage' | 'onRejected' | 'onError'>> &
    Pick<TaskEventQueueOptions, 'storage' | 'onRejected' | 'onError'>;
  private readonly waiting: QueuedTaskEvent[] = [];
  private sending: Promise<void> | undefined;
  private retryTimer: unknown;
  private failures = 0;
  private stopped = false;
  private loaded: boolean;
  private loading: Promise<void> | undefined;
  private idle: (() => void)[] = [];

  constructor(options: TaskEventQueueOptions) {
    this.options = {
      retryDelayS: 1,
      maxRetryDelayS: 60,
      fetch: globalThis.fetch.bind(globalThis),
      clock: realClock,
      ...options,
    };
    this.loaded = this.options.storage === undefined;
  }

  /** Loads the events a previous run left waiting (with `storage`) and starts sending them. */
  async start(): Promise<void> {
    this.loading ??= (async () => {
      const stored = (await this.options.storage?.load()) ?? [];
      this.waiting.unshift(...stored);
      this.loaded = true;
      await this.persist();
    })();
    await this.loading;
    this.kick();
  }

  /** Queues an event; it goes after every event recorded before it. Answers the queued entry. */
  record(runsheetId: string, taskId: string, event: TaskEventBody): QueuedTaskEvent {
    const queued: QueuedTaskEvent = { key: crypto.randomUUID(), runsheet_id: runsheetId, task_id: taskId, event };
    this.waiting.push(queued);
    this.stats.recorded++;
    void this.persist();
    this.kick();
    return queued;
  }

  /** The events not yet answered, in order. */
  get pending(): readonly QueuedTaskEvent[] {
    return [...this.waiting];
  }

  /** Resolves when nothing waits (every event answered, or refused for good). */
  drained(): Promise<void> {
    if (this.waiting.length === 0 && this.loaded) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Stops sending (what waits stays in `storage` for the next start). */
  stop(): void {
    this.stopped = true;
    if (this.retryTimer !== undefined) this.options.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private kick() {
    if (this.stopped || !this.loaded || this.sending || this.retryTimer !== undefined) return;
    this.sending = this.sendAll().finally(() => {
      this.sending = undefined;
    });
  }

  private async sendAll() {
    while (!this.stopped && this.waiting.length > 0) {
      const next = this.waiting[0]!;
      const outcome = await this.sendOne(next);
      if (outcome === 'retry') {
        const delayMs = this.retryDelayMs();
        this.retryTimer = this.options.clock.setTimeout(() => {
          this.retryTimer = undefined;
          this.kick();
        }, delayMs);
        return;
      }
      this.failures = 0;
      this.waiting.shift();
      await this.persist();
    }
    if (this.waiting.length === 0) {
      const waiting = this.idle.splice(0);
      for (const resolve of waiting) resolve();
    }
  }

  private retryAfterS: number | undefined;

  private retryDelayMs() {
    this.failures++;
    const backoff = Math.min(this.options.retryDelayS * 2 ** (this.failures - 1), this.options.maxRetryDelayS);
    const seconds = this.retryAfterS ?? backoff;
    this.retryAfterS = undefined;
    return seconds * 1000;
  }

  private async sendOne(queued: QueuedTaskEvent): Promise<'done' | 'retry'> {
    this.stats.requests++;
    if (this.failures > 0) this.stats.retries++;
    const path = `/v1/driver/runsheets/${encodeURIComponent(queued.runsheet_id)}/tasks/${encodeURIComponent(queued.task_id)}/events`;
    let response: Response;
    try {
      response = await this.options.fetch(`${this.options.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await this.options.token()}`,
          'content-type': 'application/json',
          'idempotency-key': queued.key,
        },
        body: JSON.stringify(queued.event),
      });
    } catch {
      this.options.onError?.({ status: 'network' });
      return 'retry';
    }
    if (response.status === 201 || response.status === 200) {
      await response.body?.cancel();
      this.stats.sent++;
      if (response.status === 200) this.stats.duplicates++;
      return 'done';
    }
    const problem = (await response.json().catch(() => ({}))) as { detail?: string };
    // A 409 with Retry-After is the idempotency store's "the first attempt is still in progress": not final.
    if (FINAL.has(response.status) && !response.headers.has('retry-after')) {
      const refusal = { status: response.status, ...(problem.detail ? { detail: problem.detail } : {}) };
      this.rejected.push({ event: queued, ...refusal });
      this.stats.rejected++;
      this.options.onRejected?.(queued, refusal);
      return 'done';
    }
    const retryAfter = Number(response.headers.get('retry-after'));
    this.retryAfterS = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined;
    this.options.onError?.({ status: response.status, ...(problem.detail ? { detail: problem.detail } : {}) });
    return 'retry';
  }

  private async persist() {
    if (!this.loaded) return;
    await this.options.storage?.save([...this.waiting]);
  }
}
