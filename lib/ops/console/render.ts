/** When the console draws: everything at once, at most five times a second for a burst of events, and every second. */
import { renderAttention, renderBoard, tickCountdowns } from './board.ts';
import { forgetActivity } from './derive.ts';
import { renderDetail } from './detail.ts';
import { renderDrivers, tickDrivers } from './drivers.ts';
import { session } from './state.ts';

export function renderAll(): void {
  forgetActivity();
  renderBoard();
  renderDrivers();
  renderAttention();
  renderDetail();
}

/** Events come in bursts: what they change is drawn at most five times a second. */
let renderTimer: ReturnType<typeof setTimeout> | null = null;
let renderEverything = false;
/** `onlyDrivers`: what changed is positions (the board and the detail stay as they are). */
export function renderSoon(onlyDrivers = false): void {
  forgetActivity();
  renderEverything ||= !onlyDrivers;
  if (renderTimer) return;
  renderTimer = setTimeout(() => {
    renderTimer = null;
    const everything = renderEverything;
    renderEverything = false;
    if (!session.signedIn) return;
    if (everything) renderAll();
    else {
      renderDrivers();
      renderAttention();
    }
  }, 200);
}

/** Every second: the countdowns and the "seen n min ago" of what is shown, without rebuilding it. */
export function tick(): void {
  tickCountdowns();
  tickDrivers();
  // Offers entering their last seconds: the attention list is recomputed every second (cheap, and left alone when
  // nothing in it changed); drivers going stale every 5 s.
  renderAttention();
  if (Math.floor(Date.now() / 1000) % 5 === 0) renderDrivers();
}
