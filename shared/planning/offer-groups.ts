/**
 * What a runsheet's offer group (`RSPAIRS#<runsheet>`, its dispatch record: shared/planning/dispatch-records.ts)
 * stores of its offers, kept small (issue 45 item 3: a group over 1 KB costs every wave's claim and end a unit more).
 *
 * - `offered`: one entry a driver offered the runsheet, `<wave>#<driver>`. A wave's pair id follows from the group's
 *   `job_id`, the wave, the runsheet and the driver (`wavePairId`: the planning job's wave 1 by the job, a later wave
 *   by job and wave), so the pairs' ids are not stored beside their drivers.
 * - `pair_ids`: only the pairs whose ids do not follow so: R3's (the caller's ids), X16's (a new id each assignment),
 *   and a wave sent under another job than the group's (a planning whose later job never got to this runsheet);
 *   their drivers are entered as `0#<driver>`.
 * - `open`: how many offers are open and the soonest expiry among them, `[n, soonest]` (`[0]` when none): what X14
 *   shows (`offers_open`, `offer_expires_at`); the wave worker judges from the pairs, never from it.
 */
import { pairIdOf } from '#shared/planning/keys';

/** The members of a group that name its pairs and drivers. */
export interface OfferListing {
  job_id?: string;
  offered?: Set<string>;
  pair_ids?: Set<string>;
}

/** An offer group's open offers as stored: `[n, soonest]`, `[0]` when none is open. */
export type OpenOffers = [number, string?];

/** `offered`'s entry of a driver offered the runsheet in `wave` (0: the pair is listed in `pair_ids`). */
export const offeredEntry = (wave: number, driverId: string) => `${wave}#${driverId}`;

function entryOf(entry: string) {
  const at = entry.indexOf('#');
  return { wave: Number(entry.slice(0, at)), driverId: entry.slice(at + 1) };
}

/** The id of the pair a wave offers the runsheet to a driver in (wave 1 is the planning job's own). */
export const wavePairId = (jobId: string, wave: number, runsheetId: string, driverId: string) =>
  pairIdOf(wave === 1 ? jobId : `${jobId}#${wave}`, runsheetId, driverId);

/** Every driver ever offered the runsheet. */
export const offeredDrivers = (group: OfferListing | undefined) =>
  new Set([...(group?.offered ?? [])].map((entry) => entryOf(entry).driverId));

/** The drivers offered in one wave whose pairs' ids follow from the group (none without its `job_id`). */
export function waveDrivers(group: OfferListing, wave: number): string[] {
  if (!group.job_id) return [];
  return [...(group.offered ?? [])].map(entryOf).flatMap((e) => (e.wave === wave ? [e.driverId] : []));
}

/** Every pair the runsheet was offered in: those its entries name and those listed by id. */
export function groupPairIds(group: OfferListing | undefined, runsheetId: string): string[] {
  const jobId = group?.job_id;
  const named = jobId
    ? [...(group.offered ?? [])]
        .map(entryOf)
        .flatMap(({ wave, driverId }) => (wave > 0 ? [wavePairId(jobId, wave, runsheetId, driverId)] : []))
    : [];
  return [...new Set([...named, ...(group?.pair_ids ?? [])])];
}

/** The stored form of open offers (pair id → expiry): how many, and the soonest expiry. */
export function openOffers(open: Record<string, string>): OpenOffers {
  const expiries = Object.values(open).sort();
  return expiries.length === 0 ? [0] : [expiries.length, expiries[0]!];
}

/**
 * What a new job's wave 1 keeps of a group an earlier job (or R3, X16) left when it writes the group anew: every pair
 * it named, listed by id, its drivers as `0#<driver>`, and its open offers.
 */
export function keptOffers(group: OfferListing & { open?: OpenOffers }, runsheetId: string) {
  return {
    pairIds: groupPairIds(group, runsheetId),
    offered: [...offeredDrivers(group)].map((driverId) => offeredEntry(0, driverId)),
    open: group.open ?? ([0] as OpenOffers),
  };
}

/** Two counts of open offers together: how many in all, and the sooner of their soonest expiries. */
export function addOpenOffers(a: OpenOffers, b: OpenOffers): OpenOffers {
  const soonest = [a[1], b[1]].filter((at): at is string => at !== undefined).sort()[0];
  const count = a[0] + b[0];
  return count === 0 || soonest === undefined ? [0] : [count, soonest];
}
