/**
 * What the console knows, in one place: the session (token, claims, connection), the organisation's drivers, the
 * plannings shown with their runsheets and offers, the tasks of started runsheets, and the selected runsheet. Typed by
 * the client package's answers (`Answer`), so that a field the service renames fails `npm run typecheck`.
 *
 * `screen` is how the parts below the page's composition root (main.ts) ask for a redraw or the detail without
 * importing what draws it: the imports of the console run one way, main.ts fills these in.
 */
import type { DriverPosition, paths } from '../../client/index.ts';

type Json<Reply> = Reply extends { content: { 'application/json': infer Body } } ? Body : never;
type Success<Operation> = Operation extends { responses: infer Replies }
  ? Replies extends { 200: infer Reply }
    ? Json<Reply>
    : Replies extends { 201: infer Reply }
      ? Json<Reply>
      : Replies extends { 202: infer Reply }
        ? Json<Reply>
        : never
  : never;
/** The body of a successful answer of `method path`, as the client package types it. */
export type Answer<Path extends keyof paths, Method extends 'get' | 'post'> = Success<paths[Path][Method]>;

/** A runsheet as X14 lists it (no tasks). */
export type ListedRunsheet = Answer<'/v1/plannings/{planningID}/runsheets', 'get'>['runsheets'][number];
/** A runsheet as X22 answers it, with its tasks. */
export type RunsheetDetail = Answer<'/v1/plannings/{planningID}/runsheets/{runsheetID}', 'get'>['runsheet'];
export type Runsheet = ListedRunsheet | RunsheetDetail;
/** A task as X22 answers it; the fields the task was imported with pass through (its `task_ref`, when it has one). */
export type Task = RunsheetDetail['tasks'][number] & { task_ref?: string | null };
/** A built runsheet's planned stop (route planning, 4.10), in visiting order. */
export type PlannedStop = NonNullable<RunsheetDetail['stops']>[number];
export type PlanningJob = NonNullable<Answer<'/v1/plannings/{planningID}', 'get'>['job']>;

export interface Driver {
  id: string;
  name?: string;
  on_duty?: boolean;
  service_types?: string[];
  location?: DriverPosition;
  /** Named by the organisation's driver list (a refresh reads only the drivers new to it). */
  listed?: boolean;
  /** SysAdmin: A16 read, for the duty state the by-role list does not carry. */
  driver_profile_read?: boolean;
}

/** An offer (pair) as the console keeps it: from R2's records, then moved by the pair events. */
export interface Pair {
  id: string;
  runsheet_id: string | undefined;
  driver_id: string | undefined;
  state: string;
  action: string | undefined;
  reason: string | null;
  at: string | undefined;
  first: string | undefined;
}

export interface Planning {
  id: string;
  name: string;
  driverIds: Set<string>;
  job: PlanningJob | null;
  runsheets: Map<string, Runsheet>;
  pairs: Map<string, Pair>;
  /** P3 read (its drivers and job). */
  loaded: boolean;
  /** R2 read once; dirty after a reconnect (pair events may have been missed). */
  pairsRead?: boolean;
  pairsDirty?: boolean;
}

/** The tasks of a started runsheet (with their ETAs), with the progress they were read at and when. */
export interface TaskRead {
  done: number | undefined;
  status: string;
  tasks: Task[];
  /** When X22 answered (the service's clock). */
  readAt: number;
  /** X22 answered ETAs (its driver had a recent fix): they move with the clock, so they are read again. */
  etas: boolean;
}

export interface Selected {
  planningId: string;
  runsheetId: string;
  detail: Runsheet | null;
}

/** The bearer token's claims the console reads. */
export interface Claims {
  sub: string;
  org_id?: string | null;
  roles?: string[];
  exp: number;
  iat?: number;
}

export const session = {
  token: null as string | null,
  refreshToken: null as string | null,
  claims: null as Claims | null,
  socket: null as WebSocket | null,
  signedIn: false,
  /** Which sign-in this is: work begun for an earlier one (a load, a renewal, a reconnect) stops when it sees so. */
  number: 0,
  renewals: 0,
  connections: 0,
};

/** Work begun in sign-in `mine` may go on. */
export const current = (mine: number) => session.signedIn && mine === session.number;

/** id → what the console knows of the driver. */
export const drivers = new Map<string, Driver>();
/** id → the planning shown. */
export const plannings = new Map<string, Planning>();
/** What X22's answer tells the console of a runsheet's tasks. */
export const taskReadOf = (r: RunsheetDetail): TaskRead => ({
  done: r.tasks_done,
  status: r.status,
  tasks: r.tasks,
  readAt: now(),
  etas: r.eta_updated_at != null,
});
/** `<planning>/<runsheet>` → X22's tasks (for progress, lateness, ETAs and failures). */
export const taskCache = new Map<string, TaskRead>();
/** Channels the connection holds. */
export const subscribed = new Set<string>();
/** How bad an attention item was when the dispatcher marked it as seen: it shows again only once it is worse. */
export interface Severity {
  /** Stops past their window. */
  past: number;
  /** Stops past their window or at risk. */
  stops: number;
  /** The worst stop at risk: seconds its ETA lies past its window's end. */
  worstS: number;
}
/** Attention items (a failed task, a runsheet's late stops) the dispatcher marked as seen, with how bad they were. */
export const dismissed = new Map<string, Severity>();
export const view = { selected: null as Selected | null };

/** What main.ts provides: the redraws and the detail, asked for by the parts it is made of. */
export const screen = {
  /** Everything drawn again now. */
  renderAll: () => {},
  /** Drawn again shortly (a burst of events is one redraw); `onlyDrivers`: what changed is positions. */
  renderSoon: (_onlyDrivers?: boolean) => {},
  /** The selected runsheet read again and shown. */
  loadSelected: async () => {},
  /** The selected runsheet's detail closed. */
  closeDetail: () => {},
  /** The runsheet shown in the detail. */
  select: async (_planningId: string, _runsheetId: string) => {},
  /** A runsheet was cancelled (its tasks freed, X18): the planner's unplanned tasks read again. */
  plannerChanged: async () => {},
};

/** A runsheet's tasks: X22's carry them, X14's do not. */
export const tasksOf = (r: Runsheet): Task[] => ('tasks' in r ? r.tasks || [] : []);
/** A built runsheet's planned stops as X22 answers them (none for a runsheet P5 made, or one X14 lists). */
export const stopsOf = (r: Runsheet): PlannedStop[] =>
  'stops' in r && Array.isArray(r.stops) ? (r.stops as PlannedStop[]) : [];

export const shortId = (id: string | null | undefined) => (id || '').slice(0, 8);
export const driverName = (id: string | undefined) => (id && drivers.get(id)?.name) || shortId(id);
export const rsKey = (planningId: string, runsheetId: string) => `${planningId}/${runsheetId}`;
export const roles = () => session.claims?.roles || [];
export const isSysAdmin = () => roles().includes('SysAdmin');
// A SysAdmin (no organisation of their own) names the one to watch with ?org=<id>.
export const orgId = () => session.claims?.org_id || new URLSearchParams(location.search).get('org');

/** The service's clock, as its answers' `server_time` tell it: ages and countdowns do not depend on this machine's. */
export const clock = { offset: 0 };
export const now = () => Date.now() + clock.offset;
