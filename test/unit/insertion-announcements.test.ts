/**
 * What an insertion into live routes tells (shared/routing/apply-insertion.ts `updatedAnnouncements`, issue 56: told
 * by announcements.ts `publish`): `runsheet.updated` to the driver who holds each runsheet added to, by its status.
 */
import { describe, expect, it } from 'vitest';
import { runsheetStatus } from '../../shared/planning/dispatch-records.ts';
import { updatedAnnouncements } from '../../shared/routing/apply-insertion.ts';

type Changed = Parameters<typeof updatedAnnouncements>[1][number];
const built = (id: string, added: string[]): Changed =>
  ({
    id,
    added,
    stops: [
      { task_id: 'T1', kind: 'pickup' },
      { task_id: 'T1', kind: 'dropoff' },
    ],
  }) as unknown as Changed;
const AT = '2026-11-28T08:00:00.000Z';
const claim = (driver: string, started = false) => ({
  runsheet_id: 'x',
  pair_id: 'p',
  driver_id: driver,
  driver_name: driver.toUpperCase(),
  assigned_at: AT,
  ...(started ? { started_at: AT } : {}),
});

describe('an insertion told (updatedAnnouncements)', () => {
  const statuses = new Map([
    ['rs-assigned', runsheetStatus(undefined, claim('d1') as never)],
    ['rs-under-way', runsheetStatus(undefined, claim('d2', true) as never)],
    ['rs-open', runsheetStatus(undefined, undefined)],
    ['rs-cancelled', runsheetStatus({ cancelled: { at: AT, reason: 'r' } } as never, undefined)],
  ]);
  const statusOf = (id: string) => statuses.get(id)!;

  it("tells the holder of an assigned or under-way runsheet, in the build's order; nobody else", () => {
    const told = updatedAnnouncements(
      { id: 'b-1', planning_id: 'plan-1' },
      ['rs-open', 'rs-under-way', 'rs-cancelled', 'rs-assigned'].map((id) => built(id, ['T1'])),
      statusOf,
    );
    expect(told.map((a) => (a.to === 'channel' ? `${a.channel} ${a.name} ${a.event.key}` : a.to))).toEqual([
      'user.d2 runsheet.updated b-1:rs-under-way:updated',
      'user.d1 runsheet.updated b-1:rs-assigned:updated',
    ]);
    const [first] = told;
    expect(first?.to === 'channel' && first.event.data).toEqual({
      planning_id: 'plan-1',
      runsheet_id: 'rs-under-way',
      route_build_id: 'b-1',
      added: ['T1'],
      stops: [
        { task_id: 'T1', kind: 'pickup' },
        { task_id: 'T1', kind: 'dropoff' },
      ],
    });
  });
});
