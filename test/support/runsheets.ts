/**
 * Runsheets in the end-to-end tests: X14's entry as the dispatch tests read it, and a planning made with its drivers
 * (P2, P7) for the tests that plan a day.
 */
import type { Client } from './http.ts';

/** A runsheet as X14 lists it (contract 4.7): the members the dispatch tests read. */
export interface RunsheetSummary {
  id: string;
  name?: string;
  status: string;
  wave?: number;
  offers_open?: number;
  offer_expires_at?: string | null;
  assigned_driver?: { id: string; name: string };
  assigned_at?: string;
  tasks_done?: number;
  tasks_total?: number;
  unassigned_reason?: {
    code: string;
    detail: string;
    waves: number;
    offers: { rejected: number; expired: number; closed: number };
    excluded: Record<string, number>;
  };
}

/** A new planning (P2) of the caller's organisation with these drivers (P7): its id and `version_rev` after. */
export async function planningWithDrivers(api: Client, token: string, name: string, driverIds: string[]) {
  const made = await api.post<{ id: string }>('/v1/plannings', { name }, token);
  if (made.status !== 201) throw new Error(`P2 answered ${made.status} ${JSON.stringify(made.body)}`);
  const added = await api.post<{ id: string; version_rev: string }>(
    `/v1/plannings/${made.body.id}/drivers`,
    { drivers: driverIds.map((id) => ({ id })) },
    token,
  );
  if (added.status !== 200) throw new Error(`P7 answered ${added.status} ${JSON.stringify(added.body)}`);
  return added.body;
}
