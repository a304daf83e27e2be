/**
 * The events a partner's webhook can carry (shared/webhooks/events.ts) and docs/webhooks.md's table of them: every
 * event the code can send is documented with the scope it needs (and the position it loses without
 * `locations:read`), and the table names nothing the code does not send. `publishPartnerEvent` takes only a type of
 * that list, so the type checker holds every caller to it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TASK_EVENT_TYPES } from '../../shared/planning/schemas.ts';
import { eventForPartner, PARTNER_EVENTS, type PartnerEventRule } from '../../shared/webhooks/events.ts';

/** docs/webhooks.md's event table: each documented type with its scope cell. */
function documentedEvents(): Map<string, string> {
  const lines = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8').split('\n');
  const header = lines.findIndex((line) => line.startsWith('| `type` | scope |'));
  expect(header, 'docs/webhooks.md has its event table').toBeGreaterThan(-1);
  const documented = new Map<string, string>();
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [types, scope] = line.split(' | ').map((cell) => cell.replace(/^\| /, ''));
    for (const [, type] of types!.matchAll(/`([^`]+)`/g)) documented.set(type!, scope!);
  }
  return documented;
}

/** How the table writes a rule's scope. */
const scopeCell = (rule: PartnerEventRule) =>
  rule.scope === null ? 'none' : `\`${rule.scope}\`${rule.positions ? ' (position: `locations:read`)' : ''}`;

describe('partner webhook events (contract 4.2)', () => {
  it('docs/webhooks.md lists every event the code sends, with the scope it needs, and no other', () => {
    const documented = documentedEvents();
    const rules: Record<string, PartnerEventRule> = PARTNER_EVENTS;
    expect([...documented.keys()].sort()).toEqual(Object.keys(rules).sort());
    for (const [type, rule] of Object.entries(rules)) expect(documented.get(type), type).toBe(scopeCell(rule));
  });

  it('names every task event a driver reports', () => {
    for (const type of TASK_EVENT_TYPES) expect(PARTNER_EVENTS).toHaveProperty([`task.${type}`]);
  });

  it('withholds a type it does not name, whatever the scopes', () => {
    expect(eventForPartner('offer.new', { pair_id: 'p' }, ['imports', 'plannings', 'locations:read'])).toBeUndefined();
  });
});
