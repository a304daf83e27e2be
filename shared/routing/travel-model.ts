/**
 * The travel port in use (travel.ts knows nothing of its adapters; this picks one, as mailer.ts does for mail): the
 * straight-line model of contract 4.10, or road travel times from Amazon Location Service (location-travel.ts) where
 * the deployment turned them on with `cdk deploy -c travel=amazon-location`, which sets `TRAVEL_MODEL` on the
 * functions that need travel times (lib/constructs/grants.ts). Locally it is always the straight-line model.
 */
import { clock } from '#shared/clock';
import { amazonLocationTravel } from '#shared/routing/location-travel';
import { straightLineTravel, type TravelPort, type TravelSettings } from '#shared/routing/travel';

export const TRAVEL_MODELS = ['straight-line', 'amazon-location'] as const;
export type TravelModel = (typeof TRAVEL_MODELS)[number];
export const DEFAULT_TRAVEL_MODEL: TravelModel = 'straight-line';
/** The environment variable that names the deployment's model (absent: the default). */
export const TRAVEL_MODEL_VARIABLE = 'TRAVEL_MODEL';

export const isTravelModel = (value: unknown): value is TravelModel =>
  (TRAVEL_MODELS as readonly unknown[]).includes(value);

/** The deployment's model, read when asked; a value that names none fails loudly rather than planning on a guess. */
export function travelModel(env: NodeJS.ProcessEnv = process.env): TravelModel {
  if (env['DISPATCH_LOCAL'] === '1') return DEFAULT_TRAVEL_MODEL;
  const value = env[TRAVEL_MODEL_VARIABLE] || DEFAULT_TRAVEL_MODEL;
  if (!isTravelModel(value))
    throw new Error(`${TRAVEL_MODEL_VARIABLE}=${value}: the travel model is one of ${TRAVEL_MODELS.join(', ')}`);
  return value;
}

/**
 * The travel port for one build or one runsheet's ETAs: `settings` are its straight-line settings (4.10's `travel`,
 * which the road model uses for the pairs it cannot route), `departureMs` when its legs start (a build: its earliest
 * shift start; ETAs: now). A departure already past is now: traffic is predicted forward.
 */
export function travelPortFor(settings: TravelSettings, departureMs: number = clock.nowMs()): TravelPort {
  if (travelModel() === 'straight-line') return straightLineTravel(settings);
  const departureTime = new Date(Math.max(departureMs, clock.nowMs())).toISOString();
  return amazonLocationTravel({ settings, departureTime });
}

/** A build's departure: its earliest shift start (the problem's time 0, shared/routing/problem.ts). */
export const earliestShiftStartMs = (vehicles: readonly { shift_start_utc: string }[]) =>
  Math.min(...vehicles.map((v) => Date.parse(v.shift_start_utc)));
