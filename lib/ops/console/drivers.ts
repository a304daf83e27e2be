/**
 * The drivers: who they are and their duty state (A19 for an organisation's admin; A15, then A16 for the duty, for
 * SysAdmin with ?org=), where they are (L2, then the `driver.location` events), and the table of them with their state.
 */
import type { DriverPosition } from '../../client/index.ts';
import { allPages, api, eachLimited } from './api.ts';
import { DRIVER_STATES, isStale, seen, stateOf } from './derive.ts';
import { $, enc, naturally, show, text } from './dom.ts';
import { fitting, placeDriver, refreshMarkers } from './map.ts';
import {
  type Answer,
  current,
  type Driver,
  driverName,
  drivers,
  isSysAdmin,
  orgId,
  roles,
  screen,
  session,
} from './state.ts';

type OrgUser = Answer<'/v1/org/users', 'get'>['users'][number];
type AdminUser = Answer<'/v1/admin/users/{userID}', 'get'>;
type OrgUserRead = Answer<'/v1/org/users/{userID}', 'get'>;

/** What a user read tells of a driver (A15, A16, A19, A23, a runsheet's or a pair's driver). */
export interface DriverNews {
  id: string;
  name?: string | null;
  driver_profile?: { on_duty?: boolean; service_types?: string[] } | null;
  listed?: boolean;
  driver_profile_read?: boolean;
}

/**
 * The organisation's drivers with their names and duty state, then each one's last position (L2, six at a time),
 * so that located drivers show at once. Other roles learn the drivers of their plannings (P3) and read them one by
 * one (load.ts).
 */
export async function loadDrivers(first = true): Promise<void> {
  const org = orgId();
  if (!org) return;
  let users: DriverNews[] = [];
  if (isSysAdmin()) {
    users = await allPages<DriverNews>(
      `/v1/admin/users/by-role?role_name=OrgDriver&per_page=100&org_id=${enc(org)}`,
      'users',
    );
  } else if (roles().includes('OrgAdmin')) {
    users = (await allPages<OrgUser>('/v1/org/users?per_page=100', 'users')).filter((user) =>
      (user.roles || []).some((r) => r === 'OrgDriver' || r === 'Driver'),
    );
  } else return;
  // A refresh (every minute) takes the duty states from the list and reads only the drivers new to the page.
  const fresh = first ? users : users.filter((u) => !drivers.get(u.id)?.listed);
  for (const user of users) learnDriver({ ...user, listed: true });
  fitting.bulk = first;
  await eachLimited(
    fresh.map((u) => u.id),
    6,
    async (id) => {
      if (isSysAdmin() && !drivers.get(id)?.driver_profile_read) {
        const full = await api<AdminUser>(`/v1/admin/users/${enc(id)}`).catch(() => null);
        if (full) learnDriver({ ...full, driver_profile_read: true });
      }
      await locate(id);
    },
  );
  fitting.bulk = false;
  screen.renderSoon();
}

export function learnDriver(user: DriverNews): Driver {
  const known: Driver = drivers.get(user.id) || { id: user.id };
  if (user.name) known.name = user.name;
  if (user.driver_profile) {
    known.on_duty = user.driver_profile.on_duty;
    known.service_types = user.driver_profile.service_types;
  }
  if (user.driver_profile_read) known.driver_profile_read = true;
  if (user.listed) known.listed = true;
  drivers.set(user.id, known);
  return known;
}

/** The driver's last position (L2). */
export async function locate(id: string): Promise<void> {
  const found = await api<Answer<'/v1/driver-locations/{driver_id}', 'get'>>(`/v1/driver-locations/${enc(id)}`).catch(
    () => null,
  );
  if (found?.location) moveDriver({ ...found.location, user_id: found.location.user_id || id });
}

/** A position (L2's, or a `driver.location` event's) kept if it is newer, and shown. */
export function moveDriver(fix: DriverPosition): void {
  const known: Driver = drivers.get(fix.user_id) || { id: fix.user_id };
  // Newer by version; a driver moved to another organisation (A25) starts again at 1, so a later fix counts too.
  const before = known.location;
  if (before && before.version >= fix.version && Date.parse(before.server_time) >= Date.parse(fix.server_time)) return;
  known.location = fix;
  drivers.set(fix.user_id, known);
  if (!known.name) nameOf(fix.user_id);
  placeDriver(fix.user_id, fix.latitude, fix.longitude);
}

/**
 * A driver heard of only by a position (one who joined after sign-in): their name read once, A23 (A16 for
 * SysAdmin), so that nobody shows as an id for long. A freelance driver's is not the organisation's to read.
 */
const naming = new Set<string>();
function nameOf(id: string): void {
  if (naming.has(id) || !orgId()) return;
  const path = isSysAdmin()
    ? `/v1/admin/users/${enc(id)}`
    : roles().some((r) => r === 'OrgAdmin' || r === 'OrgTransporter')
      ? `/v1/org/users/${enc(id)}`
      : null;
  if (!path) return;
  naming.add(id);
  const mine = session.number;
  api<AdminUser | OrgUserRead>(path)
    .then((found) => {
      const user = 'user' in found ? found.user : found;
      if (!current(mine) || user.org_id !== orgId()) return;
      learnDriver(user);
      screen.renderSoon();
    })
    .catch(() => {});
}

/** The table of drivers (those located or with a known duty state), by name, with their state and last fix. */
export function renderDrivers(): void {
  const rows = [...drivers.values()]
    .filter((d) => d.location || d.on_duty !== undefined)
    .sort((a, b) => naturally.compare(driverName(a.id), driverName(b.id)))
    .map((d) => {
      const { state, runsheet } = stateOf(d.id);
      const stale = isStale(d);
      const row = text('tr', '', {
        'data-driver': d.id,
        'data-state': state,
        'data-stale': String(stale),
        class: `driver state-${state}${stale ? ' stale' : ''}`,
      });
      if (d.location) {
        row.dataset['latitude'] = String(d.location.latitude);
        row.dataset['longitude'] = String(d.location.longitude);
      }
      const label = runsheet ? `${DRIVER_STATES[state]} ${runsheet.name || runsheet.id}` : DRIVER_STATES[state];
      row.append(
        text('td', driverName(d.id), { title: d.id }),
        text('td', label, { class: 'driver-state' }),
        text('td', seen(d), { class: 'driver-seen' }),
      );
      return row;
    });
  show($('drivers'), rows);
  $('driver-count').textContent = String(rows.length);
  refreshMarkers();
}

/** Every second: each shown driver's "seen n min ago", without rebuilding the table. */
export function tickDrivers(): void {
  for (const row of $('drivers').children) {
    const driver = drivers.get((row as HTMLElement).dataset['driver'] ?? '');
    const cell = row.querySelector('.driver-seen');
    if (driver && cell && cell.textContent !== seen(driver)) cell.textContent = seen(driver);
  }
}
