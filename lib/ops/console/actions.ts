/**
 * The dispatcher's actions on the selected runsheet: assign to a driver (X16, the drivers who may take it offered
 * nearest first), offer again now (X17), cancel with a reason (X18). One at a time; the answer said in words, or the
 * refusal's `detail`; the planning read again either way.
 */
import { distanceM } from '../../client/geo.ts';
import { api } from './api.ts';
import { ageOf, parametersOf, statusSentence } from './derive.ts';
import { $, button, enc, input, keepingFocus, naturally, show, text } from './dom.ts';
import { loadPlanning } from './load.ts';
import {
  type Answer,
  type Driver,
  driverName,
  drivers,
  plannings,
  type Runsheet,
  roles,
  screen,
  tasksOf,
  view,
} from './state.ts';

type Action = 'assign' | 'reoffer' | 'cancel';
/** X16–X18's answer: the runsheet as it now is. */
type ActionAnswer = Answer<'/v1/plannings/{planningID}/runsheets/{runsheetID}/reoffer', 'post'>;

const MAY_ACT = ['OrgAdmin', 'OrgTransporter', 'Merchant', 'SysAdmin'];

export function renderActions(r: Runsheet): void {
  const actions: [Action, string][] = [];
  if (roles().some((role) => MAY_ACT.includes(role))) {
    if (['unassigned', 'offered', 'open'].includes(r.status)) actions.push(['assign', 'Assign to a driver…']);
    if (['unassigned', 'offered'].includes(r.status)) actions.push(['reoffer', 'Offer again now']);
    if (['open', 'offered', 'unassigned', 'assigned'].includes(r.status)) actions.push(['cancel', 'Cancel…']);
  }
  keepingFocus(() =>
    show(
      $('detail-actions'),
      actions.map(([action, label]) => {
        const b = button(label, { 'data-action': action, 'data-focus-key': `act:${action}` });
        b.addEventListener('click', () => act(action));
        return b;
      }),
    ),
  );
  if (!actions.some(([a]) => a === 'assign')) $('assign-choices').hidden = true;
  if (!actions.some(([a]) => a === 'cancel')) $('cancel-form').hidden = true;
}

const km = (metres: number) => (metres < 1000 ? `${Math.round(metres)} m` : `${(metres / 1000).toFixed(1)} km`);

/**
 * The drivers the dispatcher may give the runsheet to, nearest to its first pickup first: drivers of the planning,
 * on duty, with a fresh position, below their runsheet limit, of its service type (the rules of 4.7, but for the
 * "offered before": a dispatcher may pick someone who declined). Also what the others were left out for.
 */
function assignChoices(planningId: string, runsheet: Runsheet) {
  const planning = plannings.get(planningId);
  const { maxAge, perDriver } = parametersOf(planning);
  const first = tasksOf(runsheet)
    .map((t) => t.from_address || t.to_address)
    .find((a) => a?.latitude != null);
  const held = new Map<string, number>();
  const out = { off_duty: 0, no_location: 0, location_stale: 0, at_capacity: 0, service_type: 0 };
  const eligible: { driver: Driver; metres: number | null }[] = [];
  if (!planning) return { eligible, out };
  for (const r of planning.runsheets.values())
    if (['assigned', 'in_progress', 'completed'].includes(r.status) && r.assigned_driver)
      held.set(r.assigned_driver.id, (held.get(r.assigned_driver.id) || 0) + 1);
  for (const id of planning.driverIds) {
    const driver = drivers.get(id) || { id };
    if (driver.on_duty === false) out.off_duty++;
    else if (first && !driver.location) out.no_location++;
    else if (first && ageOf(driver) > maxAge) out.location_stale++;
    else if ((held.get(id) || 0) >= perDriver) out.at_capacity++;
    else if (
      runsheet.service_type &&
      driver.service_types?.length &&
      !driver.service_types.includes(runsheet.service_type)
    )
      out.service_type++;
    else
      eligible.push({
        driver,
        metres:
          first?.latitude != null && first.longitude != null && driver.location
            ? distanceM({ latitude: first.latitude, longitude: first.longitude }, driver.location)
            : null,
      });
  }
  eligible.sort(
    (a, b) =>
      (a.metres ?? Infinity) - (b.metres ?? Infinity) ||
      naturally.compare(driverName(a.driver.id), driverName(b.driver.id)),
  );
  return { eligible, out };
}

async function act(action: Action): Promise<void> {
  if (!view.selected) return;
  const { planningId, runsheetId } = view.selected;
  const runsheet = view.selected.detail || plannings.get(planningId)?.runsheets.get(runsheetId);
  const name = runsheet?.name || runsheetId;
  if (action === 'assign') {
    // The planning's drivers as they are now (P7 may have added some since it was read).
    const planning = plannings.get(planningId);
    if (planning) {
      planning.loaded = false;
      await loadPlanning(planningId).catch(() => {});
    }
    const selected = view.selected;
    if (selected?.planningId !== planningId || selected?.runsheetId !== runsheetId) return;
    const shown = selected.detail || runsheet;
    if (!shown) return;
    const { eligible, out } = assignChoices(planningId, shown);
    const box = $('assign-choices');
    const left = Object.entries(out)
      .filter(([, n]) => n)
      .map(([why, n]) => `${n} ${why.replace('_', ' ')}`);
    // Who already said no to this runsheet (declined, or let its offer expire) is listed apart, and asked about.
    const refused = refusals(planningId, runsheetId);
    const fresh = eligible.filter(({ driver }) => !refused.has(driver.id)).slice(0, 8);
    const again = eligible.filter(({ driver }) => refused.has(driver.id)).slice(0, 8);
    const choice = ({ driver, metres }: (typeof eligible)[number]) => {
      const refusal = refused.get(driver.id);
      const b = button(
        `${driverName(driver.id)}${metres == null ? '' : ` · ${km(metres)}`}${refusal ? ` · ${refusal}` : ''}`,
        { 'data-driver': driver.id, class: 'choice', ...(refusal ? { 'data-refused': refusal } : {}) },
      );
      b.addEventListener('click', () =>
        refusal
          ? confirmAssign(planningId, runsheetId, name, driver.id, refusal)
          : assign(planningId, runsheetId, name, driver.id),
      );
      return b;
    };
    box.replaceChildren(
      text(
        'p',
        fresh.length
          ? 'Nearest to the first pickup:'
          : again.length
            ? 'Every driver who can take it already said no to it.'
            : 'No driver of this planning can take it now.',
        { class: 'muted' },
      ),
      ...fresh.map(choice),
      ...(again.length
        ? [
            text('p', 'Declined it or let it expire (asked before it is theirs):', { class: 'muted' }),
            ...again.map(choice),
          ]
        : []),
      ...(left.length ? [text('p', `Left out: ${left.join(', ')}.`, { class: 'muted' })] : []),
    );
    box.hidden = false;
    $('cancel-form').hidden = true;
    box.querySelector('button')?.focus();
    return;
  }
  if (action === 'cancel') {
    $('cancel-form').hidden = false;
    $('assign-choices').hidden = true;
    $('cancel-reason').focus();
    return;
  }
  if (action === 'reoffer') {
    await perform(planningId, runsheetId, 'reoffer', {}, (r) =>
      r.status === 'offered'
        ? `${name} offered again: wave ${r.wave}, ${r.offers_open} driver${r.offers_open === 1 ? '' : 's'}.`
        : `${name}: ${statusSentence(r, planningId)}.`,
    );
  }
}

/** The drivers whose offer of this runsheet ended in a no: 'declined' or 'let it expire', by driver. */
function refusals(planningId: string, runsheetId: string): Map<string, string> {
  const refused = new Map<string, string>();
  for (const pair of plannings.get(planningId)?.pairs.values() || []) {
    if (pair.runsheet_id !== runsheetId || !pair.driver_id || pair.state !== 'rejected') continue;
    if (pair.reason === 'expired') refused.set(pair.driver_id, 'let it expire');
    else if (!pair.reason || pair.reason === 'declined_by_driver') refused.set(pair.driver_id, 'declined');
  }
  return refused;
}

/** A driver who said no to it: the page asks before the runsheet is theirs (give it, or back to the choices). */
function confirmAssign(planningId: string, runsheetId: string, name: string, driverId: string, refusal: string) {
  const give = button(`Give ${name} to ${driverName(driverId)}`, {
    'data-action': 'confirm-assign',
    'data-driver': driverId,
  });
  give.addEventListener('click', () => assign(planningId, runsheetId, name, driverId));
  const back = button('Back', { 'data-action': 'assign-back' });
  back.addEventListener('click', () => act('assign'));
  $('assign-choices').replaceChildren(
    text(
      'p',
      `${driverName(driverId)} ${refusal === 'declined' ? 'declined' : 'let the offer of'} ${name}${refusal === 'declined' ? '' : ' expire'}. Give it to them anyway?`,
      {
        id: 'assign-confirm',
      },
    ),
    give,
    back,
  );
  give.focus();
}

async function assign(planningId: string, runsheetId: string, name: string, driverId: string): Promise<void> {
  await perform(
    planningId,
    runsheetId,
    'assign',
    { driver_id: driverId },
    () => `${name} assigned to ${driverName(driverId)}.`,
  );
}

/** The cancel form's button: X18 with the reason typed, or a word on why it needs one. */
export async function confirmCancel(): Promise<void> {
  const selected = view.selected;
  if (!selected) return;
  const reason = input('cancel-reason').value.trim();
  if (!reason) {
    $('action-result').textContent = 'Say why it is cancelled: the reason is kept with the runsheet.';
    $('cancel-reason').focus();
    return;
  }
  const { planningId, runsheetId } = selected;
  const name = selected.detail?.name || runsheetId;
  await perform(planningId, runsheetId, 'cancel', { reason }, () => `${name} cancelled.`);
}

/** One of X16–X18: the answer said in words, or the refusal's `detail`; the planning read again either way. */
let acting = false;
async function perform(
  planningId: string,
  runsheetId: string,
  action: Action,
  body: Record<string, string>,
  said: (runsheet: ActionAnswer) => string,
): Promise<void> {
  if (acting) return; // one action at a time: a double click sends it once
  acting = true;
  const result = $('action-result');
  const buttons = [...document.querySelectorAll<HTMLButtonElement | HTMLInputElement>('#detail button, #detail input')];
  for (const b of buttons) b.disabled = true;
  result.textContent = 'Working…';
  result.dataset['outcome'] = 'pending';
  // The answer is said where it was asked: not in another runsheet's detail opened meanwhile.
  const still = () => view.selected?.planningId === planningId && view.selected?.runsheetId === runsheetId;
  try {
    const answer = await api<ActionAnswer>(`/v1/plannings/${enc(planningId)}/runsheets/${enc(runsheetId)}/${action}`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    if (!still()) return;
    result.textContent = said(answer);
    result.dataset['outcome'] = 'done';
    $('assign-choices').hidden = true;
    $('cancel-form').hidden = true;
    input('cancel-reason').value = '';
  } catch (error) {
    if (!still()) return;
    result.textContent = `Refused: ${(error as Error).message}`;
    result.dataset['outcome'] = 'refused';
  } finally {
    acting = false;
    for (const b of buttons) b.disabled = false;
  }
  await loadPlanning(planningId).catch(() => {});
  screen.renderAll();
  if (action === 'cancel') await screen.plannerChanged();
  $('detail-title').focus();
}
