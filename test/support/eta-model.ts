/**
 * The ETA model of contract 4.11 written again for the tests, independent of the service's code (shared/planning/
 * etas.ts, shared/routing/travel.ts): a stop list reckoned from a position and a moment, with its own great-circle
 * distance (the atan2 form on the 6 371 008.8 m sphere, not the service's haversine), waits for windows and service
 * times. The unit and end-to-end tests check the service's answers against it.
 */

export interface ModelPoint {
  latitude: number;
  longitude: number;
}

export interface ModelStop {
  point: ModelPoint;
  /** The window, ISO; either end may be absent. */
  opens?: string | null | undefined;
  closes?: string | null | undefined;
  serviceS: number;
}

export interface ModelTravel {
  speed_kmh: number;
  detour_factor: number;
}

/** 4.10's defaults: the travel model and the service times of a task that names none. */
export const MODEL_DEFAULTS = { travel: { speed_kmh: 30, detour_factor: 1.3 }, pickupS: 120, dropoffS: 180 };

/** Great-circle metres by the atan2 (Vincenty, on a sphere) formula. */
export function sphereM(a: ModelPoint, b: ModelPoint): number {
  const rad = Math.PI / 180;
  const [f1, f2, dl] = [a.latitude * rad, b.latitude * rad, (b.longitude - a.longitude) * rad];
  const y = Math.hypot(
    Math.cos(f2) * Math.sin(dl),
    Math.cos(f1) * Math.sin(f2) - Math.sin(f1) * Math.cos(f2) * Math.cos(dl),
  );
  const x = Math.sin(f1) * Math.sin(f2) + Math.cos(f1) * Math.cos(f2) * Math.cos(dl);
  return 6_371_008.8 * Math.atan2(y, x);
}

/** Each stop's expected service start (epoch ms) and lateness (s past its window's end, 0 on time). */
export function expectedEtas(from: ModelPoint, startMs: number, stops: readonly ModelStop[], travel: ModelTravel) {
  let at = from;
  let now = startMs;
  return stops.map((stop) => {
    const seconds = (sphereM(at, stop.point) * travel.detour_factor) / (travel.speed_kmh / 3.6);
    const arrival = now + seconds * 1000;
    const eta = stop.opens ? Math.max(arrival, Date.parse(stop.opens)) : arrival;
    const lateByS = stop.closes ? Math.max(0, (eta - Date.parse(stop.closes)) / 1000) : 0;
    now = eta + stop.serviceS * 1000;
    at = stop.point;
    return { etaMs: eta, lateByS };
  });
}
