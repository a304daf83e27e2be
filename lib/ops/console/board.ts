/**
 * The board: the runsheets grouped by what needs a person (X14's statuses, contract 4.7), the planning filter, and
 * the attention list (unassigned runsheets, offers about to expire, failed tasks, a runsheet's stops past their window
 * or at risk, stale drivers on a runsheet).
 */
import {
  attentionItems,
  countdown,
  countdownSpan,
  GROUPS,
  sentenceNode,
  statusSentence,
  visiblePlannings,
} from './derive.ts';
import { $, button, keepingFocus, naturally, show, text } from './dom.ts';
import { dismissed, driverName, type Planning, plannings, type Runsheet, screen, view } from './state.ts';

export function renderFilter(): void {
  const filter = $<HTMLSelectElement>('planning-filter');
  const chosen = filter.value;
  show(filter, [
    text('option', 'All plannings', { value: '' }),
    ...[...plannings.values()].map((p) => text('option', p.name, { value: p.id })),
  ]);
  filter.value = plannings.has(chosen) ? chosen : '';
}

export function renderBoard(): void {
  const shown = visiblePlannings();
  const many = shown.length > 1;
  const groups = new Map<string, { p: Planning; r: Runsheet }[]>(GROUPS.map(([status]) => [status, []]));
  for (const p of shown) for (const r of p.runsheets.values()) groups.get(r.status)?.push({ p, r });
  const sections: HTMLElement[] = [];
  const selected = view.selected;
  for (const [status, title] of GROUPS) {
    const rows = groups.get(status) ?? [];
    if (!rows.length) continue;
    rows.sort(
      (a, b) =>
        naturally.compare(a.r.name || a.r.id, b.r.name || b.r.id) ||
        naturally.compare(a.r.id, b.r.id) ||
        naturally.compare(a.p.name, b.p.name),
    );
    const section = text('section', '', { 'data-group': status, class: `group group-${status}` });
    section.append(text('h3', `${title} (${rows.length})`));
    const list = document.createElement('ul');
    for (const { p, r } of rows) {
      const isSelected = selected?.planningId === p.id && selected?.runsheetId === r.id;
      const item = text('li', '', {
        'data-runsheet': r.id,
        'data-planning': p.id,
        'data-status': r.status,
        class: isSelected ? 'runsheet selected' : 'runsheet',
      });
      const open = button(r.name || r.id, {
        class: 'rs-open',
        title: r.id,
        'aria-pressed': isSelected ? 'true' : 'false',
        'data-focus-key': `rs:${p.id}:${r.id}`,
      });
      open.addEventListener('click', () => screen.select(p.id, r.id));
      const detail = sentenceNode('span', statusSentence(r, p.id), r, { class: 'rs-detail' });
      item.append(
        open,
        text('span', r.assigned_driver ? driverName(r.assigned_driver.id) || r.assigned_driver.name : '', {
          class: 'rs-driver',
        }),
        detail,
      );
      if (many) item.append(text('span', p.name, { class: 'rs-planning' }));
      list.append(item);
    }
    section.append(list);
    sections.push(section);
  }
  keepingFocus(() =>
    show($('board'), sections.length ? sections : [text('p', 'No runsheets yet.', { class: 'empty' })]),
  );
}

export function renderAttention(): void {
  const items = attentionItems();
  $('attention-count').textContent = String(items.length);
  $('attention-link').classList.toggle('calm', items.length === 0);
  $('attention-empty').hidden = items.length > 0;
  keepingFocus(() =>
    show(
      $('attention-list'),
      items.map((item) => {
        const li = text('li', '', {
          'data-kind': item.kind,
          'data-runsheet': item.runsheet?.id,
          'data-driver': item.driverId,
          class: `attention-${item.kind}`,
        });
        const open = button(item.text, {
          class: 'attention-open',
          'data-focus-key': `att:${item.kind}:${item.planningId}:${item.runsheet?.id}:${item.driverId || ''}:${item.key || ''}`,
        });
        if (item.expires) open.append(countdownSpan(item.expires, true));
        open.addEventListener('click', () => {
          if (item.runsheet && item.planningId) screen.select(item.planningId, item.runsheet.id);
        });
        li.append(open);
        const { key, severity } = item;
        if (key && severity) {
          const done = button('Seen', {
            class: 'dismiss',
            'aria-label': `mark as seen: ${item.text}`,
            'data-focus-key': `seen:${key}`,
          });
          done.addEventListener('click', () => {
            dismissed.set(key, severity);
            renderAttention();
          });
          li.append(done);
        }
        return li;
      }),
    ),
  );
}

/** Every second: the countdowns of what is shown, without rebuilding it. */
export function tickCountdowns(): void {
  for (const el of document.querySelectorAll<HTMLElement>('.countdown[data-expires]')) {
    const left = countdown(el.dataset['expires'] ?? '', el.dataset['short'] === 'true');
    if (el.textContent !== left) el.textContent = left;
  }
}
