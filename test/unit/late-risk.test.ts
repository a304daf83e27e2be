/**
 * The risk check's decision (shared/planning/late-risk.ts `riskMoves`), as data over every state of a stop: at risk or
 * not, stored or not, reckoned or not (no recent fix), still to do or done.
 */
import { describe, expect, it } from 'vitest';
import type { EtaStop, StopEta } from '../../shared/planning/etas.ts';
import { riskAttribute, riskMoves } from '../../shared/planning/late-risk.ts';

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
