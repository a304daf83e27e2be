/**
 * The per-route throttles of the two API stages (issue 33 item 10), for the routes whose requests are expensive or
 * public. The route tables name them (`throttle:`), CDK writes them into the stages' route settings
 * (lib/constructs/throttles.ts). Each figure is argued in docs/throttling.md against the reference fleet of
 * docs/scale.md (100 000 drivers, 2 000 dispatchers, 50 organisations): the legitimate peak first, then what the
 * limit bounds. `concurrency` (a function's reserved concurrency, opt-in) is about rate × the function's time with
 * room to spare.
 */
import type { Throttle } from '#shared/routes/types';

/** Both stages, every route without one of its own (unchanged since before issue 33). */
export const STAGE_THROTTLE = { rate: 500, burst: 1000 } as const;

export const THROTTLES = {
  /** A1: an argon2id hash (19 MiB) per attempt; a whole fleet signing in again in half an hour is 56 a second. */
  signIn: { rate: 50, burst: 100, concurrency: 20 },
  /** T1: every app refreshes its hour-long token: 100 000 / 3 600 = 28 a second steady, twice that after a storm. */
  refresh: { rate: 100, burst: 200, concurrency: 20 },
  /**
   * X5: partners and worker clients, tens of them, each token an hour long. Each source address and each client has
   * a budget of its own in the function (shared/tokens/token-rate.ts); this route-wide figure only caps the cost, set
   * high enough that one noisy caller is refused by its own budget long before it fills the route's.
   */
  clientToken: { rate: 100, burst: 200, concurrency: 5 },
  /** L3, L4: up to 100 index Queries each (API.md 4.9); 2 000 dispatchers searching once a minute is 33 a second. */
  search: { rate: 50, burst: 100, concurrency: 20 },
  /** P5: up to 90 runsheets and 1 000 task ids checked in one batched read each; a planning is set up a few times a day. */
  runsheets: { rate: 10, burst: 20, concurrency: 10 },
  /**
   * X23 (and the later X30, X31: one route-build bucket each): up to 2 000 task ids checked (half a read unit a task)
   * and a build queued for the worker; a planner builds a day's routes a few times a day per organisation.
   */
  routeBuilds: { rate: 10, burst: 20, concurrency: 10 },
  /** I3: up to 6 MiB through the function into S3; imports come a few a day per organisation. */
  upload: { rate: 5, burst: 10, concurrency: 5 },
  /** I4a, I4b: a job whose start queues an import of up to 100 000 rows. */
  importJob: { rate: 10, burst: 20, concurrency: 5 },
  /**
   * X29 (public): a recipient's page polls it every 30 s; 100 000 tasks a day followed by a third of their recipients
   * for an hour each is about 40 a second at the peak. Each address and each token has a budget of its own in the
   * function (60 a minute, shared/tracking/links.ts); this caps what a flood of guessed tokens costs.
   */
  tracking: { rate: 100, burst: 200, concurrency: 10 },
  /** WebSocket $connect: a token check and a write; connections last at most 2 h, so 100 000 apps reconnect at 14 a second. */
  connect: { rate: 200, burst: 400, concurrency: 20 },
  /** WebSocket subscribe: one frame or two after each connect (each connection is held to 10 a second besides). */
  subscribe: { rate: 200, burst: 400, concurrency: 20 },
} as const satisfies Record<string, Throttle>;
