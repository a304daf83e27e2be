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
