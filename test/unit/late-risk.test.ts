/**
 * The risk check's decision (shared/planning/late-risk.ts `riskMoves`), as data over every state of a stop: at risk or
 * not, stored or not, reckoned or not (no recent fix), still to do or done; and what the moves written tell
 * (`riskAnnouncements`, told by announcements.ts `publish`).
 */
import { describe, expect, it } from 'vitest';
import type { EtaStop, StopEta } from '../../shared/planning/etas.ts';
import { riskAnnouncements, riskAttribute, riskMoves } from '../../shared/planning/late-risk.ts';

const stop = (taskId: string, kind: 'pickup' | 'dropoff', lateByS: number | null): EtaStop & StopEta => ({
  taskId,
  kind,
  point: { latitude: 1.3, longitude: 103.8 },
  opensMs: undefined,
  closesMs: 1_000_000,
  serviceS: 120,
  etaMs: lateByS === null ? null : 1_000_000 + lateByS * 1000,
  lateByS,
});
const moves = (stops: (EtaStop & Partial<StopEta>)[], stored: string[]) =>
  riskMoves(stops, new Set(stored)).map((m) => `${m.move} ${m.attribute}`);

describe('riskMoves (contract 4.11: once per transition)', () => {
  it('raises a stop that became at risk, once: not again while it is stored', () => {
    expect(moves([stop('T', 'pickup', 90)], [])).toEqual(['raise late:pickup:T']);
    expect(moves([stop('T', 'pickup', 300)], ['late:pickup:T'])).toEqual([]);
  });

  it('clears a stored stop that is on time again, and says nothing of one on time that was not at risk', () => {
    expect(moves([stop('T', 'dropoff', 0)], ['late:dropoff:T'])).toEqual(['clear late:dropoff:T']);
    expect(moves([stop('T', 'dropoff', 0)], [])).toEqual([]);
  });

  it('drops the state of a stop done (no longer among the stops to do), whatever the ETAs', () => {
    expect(moves([stop('T', 'dropoff', 0)], ['late:pickup:T'])).toEqual(['drop late:pickup:T']);
    expect(moves([], ['late:pickup:T', 'late:dropoff:T'])).toEqual(['drop late:pickup:T', 'drop late:dropoff:T']);
  });

  it('keeps the state of a stop it cannot reckon (no recent fix, no coordinates)', () => {
    const unknown = { ...stop('T', 'pickup', null) };
    expect(moves([unknown], ['late:pickup:T'])).toEqual([]);
    expect(moves([{ ...unknown, etaMs: undefined, lateByS: undefined }], [])).toEqual([]);
  });

  it('names each stop apart: the pickup and drop-off of one task, and tasks whose ids hold colons', () => {
    expect(riskAttribute({ kind: 'pickup', taskId: 'a:b' })).not.toBe(
      riskAttribute({ kind: 'dropoff', taskId: 'a:b' }),
    );
    expect(moves([stop('T', 'pickup', 10), stop('T', 'dropoff', 20)], [])).toEqual([
      'raise late:pickup:T',
      'raise late:dropoff:T',
    ]);
  });
});

describe('riskAnnouncements (what the moves written tell, in order)', () => {
  const NOW = '2026-11-27T09:00:00.000Z';
  const RAISED = '2026-11-27T08:40:00.000Z';
  const at = { planId: 'plan-1', orgId: 'org-1', runsheetId: 'rs-1', driver: { id: 'd1', name: 'Ann' }, now: NOW };
  const tasks = [{ id: 'T', task_ref: 'REF-7' }, { id: 'U' }];
  const claim = { driver_id: 'd1', 'late:dropoff:U': { since: RAISED, eta_utc: NOW, late_by_s: 60 } };
  const [raise, clear] = riskMoves([stop('T', 'pickup', 90), stop('U', 'dropoff', 0)], new Set(['late:dropoff:U']));

  it("tells a raise and a clear each on the planning's channel, then to its partners; a drop tells nothing", () => {
    const told = riskAnnouncements(
      at,
      [raise, { move: 'drop', attribute: 'late:pickup:V' }, clear, undefined],
      claim,
      tasks,
    );
    expect(
      told.map((a) =>
        a.to === 'channel' ? `${a.channel} ${a.name}` : a.to === 'partners' ? `partners ${a.type}` : a.to,
      ),
    ).toEqual([
      'planning.plan-1 task.late_risk',
      'partners task.late_risk',
      'planning.plan-1 task.back_on_time',
      'partners task.back_on_time',
    ]);
  });

  it("keys a raise by its time and a clear by the raise's, the same on the frame and the webhook", () => {
    const told = riskAnnouncements(at, [raise, clear], claim, tasks);
    const keys = told.map((a) => (a.to === 'channel' ? a.event.key : a.to === 'partners' ? a.key : ''));
    expect(keys).toEqual([
      `rs-1:T:pickup:late_risk:${NOW}`,
      `rs-1:T:pickup:late_risk:${NOW}`,
      `rs-1:U:dropoff:back_on_time:${RAISED}`,
      `rs-1:U:dropoff:back_on_time:${RAISED}`,
    ]);
  });

  it("carries the stop's task, its ref when it has one, the driver, the window's end, the ETA and the lateness", () => {
    const [frame, partners] = riskAnnouncements(at, [raise], claim, tasks);
    const data = {
      planning_id: 'plan-1',
      runsheet_id: 'rs-1',
      task_id: 'T',
      task_ref: 'REF-7',
      driver: { id: 'd1', name: 'Ann' },
      stop_kind: 'pickup',
      window_end_utc: new Date(1_000_000).toISOString(),
      eta_utc: new Date(1_090_000).toISOString(),
      late_by_s: 90,
    };
    expect(frame?.to === 'channel' && frame.event.data).toEqual(data);
    expect(partners?.to === 'partners' && [partners.orgId, partners.data]).toEqual(['org-1', data]);
    const [unreferenced] = riskAnnouncements(at, [clear], claim, tasks);
    expect(unreferenced?.to === 'channel' && unreferenced.event.data).not.toHaveProperty('task_ref');
  });
});
