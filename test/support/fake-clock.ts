/**
 * Timers that run only when a test moves time on: the clock the typed client's queues (the location uploader, the
 * task event queue) take in their unit tests.
 */
import type { UploaderClock } from '../../lib/client/location-uploader.ts';

/** Lets the promises a timer's callback started settle (`rounds` microtask turns). */
export const settle = async (rounds = 50) => {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
};

export class FakeClock implements UploaderClock {
  private time: number;
  private timers: { at: number; callback: () => void; id: number }[] = [];
  private ids = 0;
  constructor(start = '2026-11-24T08:00:00Z') {
    this.time = Date.parse(start);
  }
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
