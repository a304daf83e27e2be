/**
 * The selected runsheet: its status said in words, its driver, its stops in the order its driver takes them (each
 * with its window, planned time and ETA side by side, and where it stands: timeliness.ts), its tasks in order
 * (status, failure, lateness), its offers, and the actions that apply (actions.ts); its stops on the map.
 */
import { renderActions } from './actions.ts';
import { api } from './api.ts';
import { renderBoard } from './board.ts';
import { GROUPS, lastEventOf, pairWords, sentenceNode, statusSentence } from './derive.ts';
import { $, clockTime, enc, show, text } from './dom.ts';
import { clearStops, drawStops, fitMap, markStops } from './map.ts';
import { type Answer, driverName, plannings, rsKey, stopsOf, taskCache, taskReadOf, tasksOf, view } from './state.ts';
import { isLate, PROGRESS_WORDS, type StopView, standingWords, stopViews } from './timeliness.ts';

/** A window as a dispatcher reads it: "09:00 GMT+8–11:00 GMT+8", "until 11:00 GMT+8", or "none". */
const windowWords = (start: string | null, end: string | null) =>
  start && end
    ? `${clockTime(start)}–${clockTime(end)}`
    : end
      ? `until ${clockTime(end)}`
      : start
        ? `from ${clockTime(start)}`
        : 'none';

/**
 * One stop: what and where in the order, its progress (done, failed, to do, or cancelled by its task's failed pickup)
 * and its address, then its window, planned time and ETA side by side, and its standing.
 */
function stopRow(stop: StopView, i: number): HTMLElement {
  const li = text('li', '', {
    'data-stop': `${stop.task.id}:${stop.kind}`,
    'data-planned': stop.planned,
    'data-eta': stop.eta,
    'data-standing': stop.standing,
    'data-progress': stop.progress,
    class: `stop standing-${stop.standing} progress-${stop.progress}`,
  });
  const leg = stop.distanceM && stop.distanceM > 0 ? ` · ${kilometres(stop.distanceM)}` : '';
  const times = text('span', '', { class: 'stop-times' });
  times.append(
    text('span', `window ${windowWords(stop.windowStart, stop.windowEnd)}`, { class: 'stop-window' }),
    text('span', `planned ${stop.planned ? clockTime(stop.planned) : '—'}`, { class: 'stop-planned' }),
    text('span', `ETA ${stop.eta ? clockTime(stop.eta) : stop.progress === 'done' ? 'done' : '—'}`, {
      class: 'stop-eta',
    }),
  );
  // Its progress says done or failed: the standing adds only what it knows beyond (late, at risk, behind plan).
  const standing = stop.standing === 'done' ? '' : standingWords(stop);
  li.append(
    text('span', `${i + 1}. ${stop.kind === 'pickup' ? 'pickup' : 'drop-off'} `, { class: 'stop-what' }),
    text('strong', stop.task.task_ref || stop.task.id),
    text('span', leg, { class: 'muted' }),
    text('span', PROGRESS_WORDS[stop.progress], { class: 'stop-progress' }),
    text('span', stop.address, { class: 'stop-address' }),
    times,
    text('span', standing, { class: 'stop-standing' }),
  );
  return li;
}

/** A leg's planned distance as a dispatcher reads it. */
const kilometres = (metres: number) => (metres < 1000 ? `${Math.round(metres)} m` : `${(metres / 1000).toFixed(1)} km`);

export async function select(planningId: string, runsheetId: string): Promise<void> {
  view.selected = { planningId, runsheetId, detail: plannings.get(planningId)?.runsheets.get(runsheetId) || null };
  $('action-result').textContent = '';
  $('assign-choices').hidden = true;
  $('cancel-form').hidden = true;
  renderBoard();
  renderDetail();
  $('detail').hidden = false;
  // The keyboard goes where the runsheet is shown: its title, then its actions.
  $('detail-title').focus();
  await loadSelected();
  const detail = view.selected?.detail;
  drawStops(detail ? stopViews(detail) : [], detail ? stopsOf(detail).length > 0 : false);
  if (window.matchMedia?.('(max-width: 760px)').matches) $('detail').scrollIntoView({ block: 'start' });
}

/** The detail closed, the keyboard back on the runsheet's button on the board. */
export function closeAndRefocus(): void {
  const was = view.selected;
  closeDetail();
  if (was)
    document
      .querySelector<HTMLElement>(`[data-focus-key="rs:${CSS.escape(was.planningId)}:${CSS.escape(was.runsheetId)}"]`)
      ?.focus();
}

export function closeDetail(): void {
  view.selected = null;
  $('detail').hidden = true;
  clearStops();
  fitMap();
  renderBoard();
}

/** The selected runsheet read again (X22): its tasks, and its status for the board too. */
export async function loadSelected(): Promise<void> {
  if (!view.selected) return;
  const { planningId, runsheetId } = view.selected;
  try {
    const found = await api<Answer<'/v1/plannings/{planningID}/runsheets/{runsheetID}', 'get'>>(
      `/v1/plannings/${enc(planningId)}/runsheets/${enc(runsheetId)}`,
    );
    const selected = view.selected;
    if (selected?.planningId !== planningId || selected?.runsheetId !== runsheetId) return;
    selected.detail = found.runsheet;
    const listed = plannings.get(planningId)?.runsheets;
    const before = listed?.get(runsheetId);
    if (listed && before) {
      const { tasks, ...status } = found.runsheet;
      listed.set(runsheetId, { ...before, ...status });
    }
    if (['assigned', 'in_progress', 'completed'].includes(found.runsheet.status))
      taskCache.set(rsKey(planningId, runsheetId), taskReadOf(found.runsheet));
  } catch (error) {
    $('action-result').textContent = `Could not read the runsheet: ${(error as Error).message}`;
  }
  renderDetail();
}

export function renderDetail(): void {
  const selected = view.selected;
  if (!selected) return;
  const { planningId, runsheetId } = selected;
  const planning = plannings.get(planningId);
  const r = selected.detail || planning?.runsheets.get(runsheetId);
  if (!r) return;
  const listed = planning?.runsheets.get(runsheetId) || r;
  $('detail-title').textContent = r.name || r.id;
  const sentence = statusSentence(listed, planningId);
  const label = GROUPS.find(([status]) => status === listed.status)?.[1] || listed.status;
  const status = sentenceNode('span', sentence.startsWith(listed.status) ? sentence : `${label} · ${sentence}`, listed);
  show($('detail-status'), [status]);
  $('detail-status').dataset['status'] = listed.status;
  $('detail-driver').textContent = listed.assigned_driver ? driverName(listed.assigned_driver.id) : 'nobody yet';
  $('detail-planning').textContent = planning ? `· ${planning.name}` : '';
  show(
    $('detail-tasks'),
    tasksOf(r).map((task) => {
      const late = isLate(task);
      const last = (task.timeline || [])[task.timeline.length - 1];
      const failure = task.status === 'failed' ? lastEventOf(task, 'failed') : null;
      const where = [task.from_address?.street_address, task.to_address?.street_address].filter(Boolean).join(' → ');
      const li = text('li', '', { 'data-task': task.id, 'data-status': task.status, 'data-late': String(late) });
      li.append(
        text('strong', task.task_ref || task.id),
        text('span', ` ${where}`),
        text('span', ` · ${task.status.replace('_', ' ')}`, { class: `task-status task-${task.status}` }),
      );
      if (failure?.failure_reason) li.append(text('span', ` (${failure.failure_reason.replace(/_/g, ' ')})`));
      if (failure?.note) li.append(text('span', ` “${failure.note}”`));
      if (last) li.append(text('span', ` ${clockTime(last.happened_at_utc)}`, { class: 'muted' }));
      if (late) li.append(text('span', ' late', { class: 'late' }));
      return li;
    }),
  );
  const stops = stopViews(r);
  $('detail-stops-head').hidden = stops.length === 0;
  show($('detail-stops'), stops.map(stopRow));
  markStops(stops);
  const offers = [...(planning?.pairs.values() || [])]
    .filter((p) => p.runsheet_id === runsheetId)
    .sort((a, b) => String(a.first || a.at).localeCompare(String(b.first || b.at)));
  show(
    $('detail-offers'),
    offers.length
      ? offers.map((pair) =>
          text('li', `${driverName(pair.driver_id)} · ${pairWords(pair)} ${clockTime(pair.at)}`, {
            'data-pair': pair.id,
            'data-state': pair.state,
            class: `state state-${pair.state}`,
          }),
        )
      : [text('li', 'No offers yet.', { class: 'muted' })],
  );
  renderActions(listed);
}
