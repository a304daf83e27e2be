/**
 * Route planning's pure room: the problem the solver is given and the solution it answers (contract 4.10). No I/O,
 * no AWS, no clock but the one passed in: tasks, vehicles and a travel matrix in, routes out, deterministic for a seed
 * (and an iteration budget). The worker around it (shared/routing/) loads the tasks, builds the matrix through a
 * travel port, calls `solve`, checks the answer with the independent checker and stores it.
 *
 * Units: times are seconds from the problem's own base instant (the worker picks it, e.g. the earliest shift start),
 * distances metres. Locations are indices into the matrix; equal coordinates share one index (0 m, 0 s apart).
 */

/** n×n travel between locations, row-major (`from * n + to`): metres and seconds. */
export interface TravelMatrix {
  readonly size: number;
  readonly distanceM: Float64Array;
  readonly durationS: Float64Array;
}

/** One stop of a task: where, when its service may start (inclusive), and how long the service takes. */
export interface StopSpec {
  readonly location: number;
  readonly open: number;
  readonly close: number;
  readonly serviceS: number;
}

/** A load or a capacity in the three dimensions of 4.10; a capacity of `Infinity` is unlimited. */
export interface Load {
  readonly weight: number;
  readonly volume: number;
  readonly items: number;
}

export interface TaskSpec {
  /** The caller's id (an X10 task id), handed back in the solution. */
  readonly id: string;
  readonly pickup: StopSpec;
  readonly dropoff: StopSpec;
  readonly load: Load;
  /** The task's import job's service type, when known. */
  readonly serviceType?: string | undefined;
  /**
   * The vehicles (indices into `problem.vehicles`) that may take it, when it is pinned (a live runsheet's own task
   * stays on that runsheet's vehicle): no other vehicle is tried. Absent: any vehicle that can serve it.
   */
  readonly vehicles?: readonly number[] | undefined;
  /**
   * The vehicle (an index) that already carries it: its pickup is done, only its drop-off is left, by that vehicle,
   * and its load is on board from the vehicle's start (starting-state.ts). Its `pickup` is not looked at; the solution
   * names no pickup stop for it.
   */
  readonly onBoard?: number | undefined;
}

export interface VehicleSpec {
  readonly id: string;
  readonly start: number;
  /** Where the route must end by `shiftEnd`; null: the route ends at its last stop. */
  readonly end: number | null;
  readonly shiftStart: number;
  readonly shiftEnd: number;
  readonly capacity: Load;
  /** When given, the vehicle takes only tasks whose `serviceType` is one of them. */
  readonly serviceTypes?: readonly string[] | undefined;
  /** Pickups and drop-offs together, at most (4.10: 400 for a runsheet of 200 tasks, or the vehicle's `max_stops`). */
  readonly maxStops: number;
}

export interface RoutingProblem {
  readonly matrix: TravelMatrix;
  readonly tasks: readonly TaskSpec[];
  readonly vehicles: readonly VehicleSpec[];
  /** `distance`: most tasks, then least distance. `vehicles`: most tasks, then fewest vehicles, then least distance. */
  readonly objective: 'distance' | 'vehicles';
  /**
   * A warm start (starting-state.ts): routes the search begins from, each a vehicle's stops in order (every task
   * named in them with both its stops, or its drop-off alone when it is `onBoard`). The tasks not named are inserted
   * into them first. A route the search ends with the same tasks it began with is answered in its starting order.
   */
  readonly initial?: readonly InitialRoute[] | undefined;
}

/** A vehicle's route to start from: its stops by task (an index into `problem.tasks`) and kind, in order. */
export interface InitialRoute {
  readonly vehicle: number;
  readonly stops: readonly { readonly task: number; readonly kind: StopKind }[];
}

export interface SolveOptions {
  readonly seed: number;
  /** The clock, in milliseconds (the worker passes its own; tests a fake one). */
  readonly now: () => number;
  /** Stop searching when `now()` reaches it. */
  readonly deadlineMs: number;
  /** Stop after this many search iterations (determinism tests, benchmarks); unbounded when absent. */
  readonly maxIterations?: number | undefined;
  /** Called with the best solution's distance so far, at most every `progressEveryMs` (default 2 000). */
  readonly onProgress?: ((progress: { bestDistanceM: number; elapsedMs: number }) => void) | undefined;
  readonly progressEveryMs?: number | undefined;
  /** Told what the finishing moves on the best plan did (distance before and after), where they ran (benchmarks). */
  readonly onFinish?: ((finish: { fromM: number; toM: number }) => void) | undefined;
}

export type StopKind = 'pickup' | 'dropoff';

export interface PlannedStop {
  /** Index into `problem.tasks`. */
  readonly task: number;
  readonly kind: StopKind;
  readonly location: number;
  readonly arrival: number;
  /** When the service starts: max(arrival, window open). */
  readonly start: number;
  readonly departure: number;
  readonly distanceFromPreviousM: number;
}

export interface PlannedRoute {
  /** Index into `problem.vehicles`. */
  readonly vehicle: number;
  readonly stops: readonly PlannedStop[];
  /** When the vehicle leaves its start (it may wait there to arrive at its first window on time). */
  readonly departure: number;
  /** At `end` (or done with the last stop when `end` is null). */
  readonly arrival: number;
  readonly distanceM: number;
  readonly durationS: number;
  readonly peakLoad: Load;
}

export type UnplannedCode = 'time_window' | 'capacity' | 'service_type' | 'not_enough_vehicles';

/** Of a `time_window` task: which it cannot meet, even alone (the furthest any vehicle got). */
export type MissedWindow = 'pickup' | 'dropoff' | 'shift_end';

export interface RoutingSolution {
  /** One per vehicle used, in the order of `problem.vehicles`. */
  readonly routes: readonly PlannedRoute[];
  readonly unplanned: readonly {
    readonly task: number;
    readonly code: UnplannedCode;
    readonly missed?: MissedWindow | undefined;
  }[];
  readonly distanceM: number;
  readonly durationS: number;
  readonly stopped: 'time_limit' | 'converged';
  readonly iterations: number;
}
