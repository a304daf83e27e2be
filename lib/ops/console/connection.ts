/**
 * Sign-in (A1, or a pasted token), the bearer token's renewal (T1) before it expires, sign-out (X6 ends the refresh
 * family), and the live connection: `user.<id>`, `org.<id>`, SysAdmin's `drivers.freelance` and each planning's
 * channel, kept open with a keepalive frame and opened again (with a renewed token) when it closes.
 */
import { type EventFrame, isEvent, type OrgEvents, type PlanningEvents, type ServerFrame } from '../../client/index.ts';
import { allPages, api, subscribe } from './api.ts';
import { $, clockTime, config, enc, input, naturally, text } from './dom.ts';
import { loadDrivers, moveDriver } from './drivers.ts';
import { cancelReloads, loadPlannings, scheduleReload } from './load.ts';
import { fitMap, removeMap, setUpMap } from './map.ts';
import { describe, eventWords, loadNotifications, notify } from './notifications.ts';
import { resetPlanner } from './planner.ts';
import { renderSoon, tick } from './render.ts';
import {
  type Answer,
  type Claims,
  current,
  dismissed,
  drivers,
  isSysAdmin,
  orgId,
  plannings,
  roles,
  rsKey,
  session,
  subscribed,
  taskCache,
  view,
} from './state.ts';

// The roles that may watch an organisation; a driver or a partner is told so at sign-in.
const WATCHERS = ['SysAdmin', 'OrgAdmin', 'OrgTransporter', 'Merchant'];

const decode = (jwt: string): Claims =>
  JSON.parse(atob((jwt.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/')));
/** The claims of the session's token (set from sign-in to sign-out). */
const claims = () => session.claims as Claims;

let renewTimer: ReturnType<typeof setTimeout> | undefined;
let refreshTimer: ReturnType<typeof setInterval> | undefined;
let tickTimer: ReturnType<typeof setInterval> | undefined;
let keepaliveTimer: ReturnType<typeof setInterval> | undefined;

/** The sign-in form: a pasted token, or A1 with the email and password. */
export async function signIn(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  $('error').textContent = '';
  try {
    const pasted = input('token').value.trim();
    if (pasted) {
      session.token = pasted;
      session.refreshToken = null;
    } else {
      const login = await api<Answer<'/v1/auth/login', 'post'>>('/v1/auth/login', {
        method: 'POST',
        body: JSON.stringify({ user: { email: input('email').value, password: input('password').value } }),
      });
      session.token = login.bearer_token;
      session.refreshToken = login.refresh_token || null;
    }
    try {
      session.claims = decode(session.token);
    } catch {
      throw new Error('that is not a bearer token');
    }
    if (claims().exp * 1000 <= Date.now()) throw new Error('that token has expired');
    if (!roles().some((r) => WATCHERS.includes(r))) {
      throw new Error(
        'this page is for dispatchers (OrgAdmin, OrgTransporter, Merchant or SysAdmin); this account is ' +
          (roles().join(', ') || 'without a role'),
      );
    }
    // A SysAdmin watches one organisation at a time: without ?org=, the page asks which (issue 46.4).
    if (isSysAdmin() && !orgId()) return await askOrganisation();
    await start();
  } catch (error) {
    signOut(`Sign-in failed: ${(error as Error).message}`);
  }
}

type Organisation = Answer<'/v1/admin/organisations', 'get'>['organisations'][number];

/** The organisations (X3) to choose from, in the sign-in form; the choice is watched as ?org= would be. */
async function askOrganisation(): Promise<void> {
  const organisations = await allPages<Organisation>('/v1/admin/organisations?per_page=100', 'organisations');
  organisations.sort((a, b) => naturally.compare(a.name, b.name));
  $('org-choice').replaceChildren(
    ...organisations.map((organisation) => text('option', organisation.name, { value: organisation.id })),
  );
  $('org-pick').hidden = false;
  $('org-choice').focus();
}

/** The organisation chosen: named in the address (a reload keeps it), then the console starts on it. */
export async function watchChosen(): Promise<void> {
  const chosen = $<HTMLSelectElement>('org-choice').value;
  if (!chosen || !session.token) return;
  const url = new URL(location.href);
  url.searchParams.set('org', chosen);
  history.replaceState(null, '', url);
  $('org-pick').hidden = true;
  try {
    await start();
  } catch (error) {
    signOut(`Sign-in failed: ${(error as Error).message}`);
  }
}

/** The sign-out button: back to sign-in, and the refresh family ended (X6), not only this page's copy of it. */
export function signOutAndEnd(): void {
  const [bearer, refresh] = [session.token, session.refreshToken];
  signOut('Signed out.');
  if (refresh)
    fetch('/v1/auth/logout', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ refresh_token: refresh }),
    }).catch(() => {});
}

async function start(): Promise<void> {
  session.signedIn = true;
  const mine = ++session.number;
  $('signin').hidden = true;
  $('app').hidden = false;
  $('signout').hidden = false;
  $('attention-link').hidden = false;
  $('status').textContent = `${orgId() ? `organisation ${orgId()}` : 'no organisation'} · connecting…`;
  setUpMap();
  scheduleRenewal();
  connect();
  loadNotifications();
  await loadDrivers();
  if (!current(mine)) return;
  fitMap();
  await loadPlannings();
  if (!current(mine)) return;
  clearInterval(refreshTimer);
  clearInterval(tickTimer);
  let refreshes = 0;
  refreshTimer = setInterval(() => {
    refreshes += 1;
    // The plannings' statuses every 15 s; the drivers' duty (no event tells it) every minute.
    refresh(refreshes % 4 === 0).catch(() => {});
  }, 15_000);
  tickTimer = setInterval(tick, 1000);
}

/** One refresh at a time: a slow one is not overtaken by the next. */
let refreshing = false;
async function refresh(withDrivers: boolean): Promise<void> {
  if (refreshing) return;
  refreshing = true;
  try {
    if (withDrivers) await loadDrivers(false);
    await loadPlannings();
  } finally {
    refreshing = false;
  }
}

/** Back to the sign-in form, with the message where the user looks; nothing of the session is kept. */
function signOut(message: string): void {
  $('org-pick').hidden = true;
  session.signedIn = false;
  session.number += 1;
  renewing = null;
  clearTimeout(renewTimer);
  clearInterval(refreshTimer);
  clearInterval(tickTimer);
  clearInterval(keepaliveTimer);
  cancelReloads();
  resetPlanner();
  if (session.socket) {
    session.socket.onclose = null;
    session.socket.close();
    session.socket = null;
  }
  session.token = session.refreshToken = null;
  session.claims = null;
  view.selected = null;
  for (const known of [drivers, plannings, taskCache, subscribed, dismissed]) known.clear();
  removeMap();
  $('drivers').replaceChildren();
  $('driver-count').textContent = '0';
  $('board').replaceChildren(text('p', 'No runsheets yet.', { class: 'empty' }));
  $('planning-filter').replaceChildren(text('option', 'All plannings', { value: '' }));
  $('attention-list').replaceChildren();
  $('attention-count').textContent = '0';
  $('detail').hidden = true;
  $('notifications').replaceChildren();
  $('app').hidden = true;
  $('signout').hidden = true;
  $('attention-link').hidden = true;
  $('signin').hidden = false;
  input('password').value = '';
  input('token').value = '';
  $('error').textContent = message || '';
  $('status').textContent = 'signed out';
}

/**
 * Renews the bearer token (T1) before it expires: a quarter of its life or a minute ahead, whichever is sooner. A
 * pasted token cannot be renewed: the page returns to sign-in, saying why, when it expires.
 */
function scheduleRenewal(): void {
  clearTimeout(renewTimer);
  const { exp, iat } = claims();
  const life = (exp - (iat || exp - 3600)) * 1000;
  const ahead = session.refreshToken ? Math.min(60_000, life / 4) : 0;
  renewTimer = setTimeout(renew, Math.max(0, exp * 1000 - Date.now() - ahead));
}

/** One renewal at a time: a refresh token is used once (a second use revokes the family, contract 3). */
let renewing: Promise<void> | null = null;
function renew(): Promise<void> {
  if (!renewing) {
    const mine = session.number;
    renewing = renewOnce(mine).finally(() => {
      if (mine === session.number) renewing = null;
    });
  }
  return renewing;
}

async function renewOnce(mine: number): Promise<void> {
  const expiredAt = clockTime(new Date(claims().exp * 1000).toISOString());
  if (!session.refreshToken) return signOut(`Your session expired at ${expiredAt}: sign in again.`);
  try {
    const next = await api<Answer<'/v1/auth/refresh', 'post'>>('/v1/auth/refresh', {
      method: 'POST',
      body: JSON.stringify({ refresh_token: session.refreshToken }),
    });
    if (!current(mine)) return;
    session.token = next.bearer_token;
    session.refreshToken = next.refresh_token;
    session.claims = decode(session.token);
    session.renewals += 1;
    document.body.dataset['renewals'] = String(session.renewals);
    scheduleRenewal();
    // The connection was opened with the old token: open a new one with the new token and subscribe again.
    if (session.socket) session.socket.close();
  } catch (error) {
    if (!current(mine)) return;
    if ((error as { status?: number }).status === undefined && claims().exp * 1000 > Date.now() + 5000) {
      renewTimer = setTimeout(renew, 5000); // the network, not the session: try again shortly
      return;
    }
    signOut(`Your session ended (${(error as Error).message}): sign in again.`);
  }
}

function connect(): void {
  const base = config.websocketUrl || `${(location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host}/ws`;
  const opened = new WebSocket(`${base}?token=${enc(session.token ?? '')}`);
  session.socket = opened;
  opened.onopen = () => {
    session.connections += 1;
    document.body.dataset['connections'] = String(session.connections);
    document.body.dataset['pongs'] = '0';
    // API Gateway closes a connection that says nothing for 10 minutes: a keepalive frame every third of that.
    clearInterval(keepaliveTimer);
    keepaliveTimer = setInterval(() => {
      if (opened.readyState === 1) opened.send(JSON.stringify({ action: 'ping' }));
    }, config.keepaliveMs || 200_000);
    subscribed.clear();
    const channels = [`user.${claims().sub}`];
    if (orgId()) channels.push(`org.${orgId()}`);
    if (isSysAdmin()) channels.push('drivers.freelance');
    for (const id of plannings.keys()) channels.push(`planning.${id}`);
    subscribe(channels);
    // What happened while the connection was down: the plannings read again, their offers (R2) too.
    if (session.connections > 1)
      for (const [id, planning] of plannings) {
        planning.pairsDirty = true;
        scheduleReload(id, 100);
      }
  };
  opened.onmessage = (message) => onFrame(JSON.parse(message.data));
  // Closed by the gateway (idle, or its 2-hour limit), by a renewal, or by the network: connect again and subscribe
  // again after a second.
  const mine = session.number;
  opened.onclose = (event) => {
    if (session.socket === opened) clearInterval(keepaliveTimer);
    document.body.dataset['closed'] = String(event.code);
    if (!current(mine) || session.socket !== opened) return;
    if (claims().exp * 1000 <= Date.now()) {
      renew();
      return;
    }
    $('status').textContent = 'disconnected · reconnecting…';
    setTimeout(() => {
      if (current(mine) && session.socket === opened) connect();
    }, 1000);
  };
}

type PlanningFrame = EventFrame<PlanningEvents>;
/** What a pair event may carry (`PlanningEvents`' pair events, less what only some of them have). */
interface PairData {
  pair_id?: string;
  runsheet_id?: string;
  driver_id?: string;
  current_state?: string;
  reason?: string | null;
  happened_at_utc?: string;
}

function onFrame(frame: ServerFrame): void {
  if (frame.type === 'pong') {
    document.body.dataset['pongs'] = String(Number(document.body.dataset['pongs'] || 0) + 1);
    return;
  }
  if (frame.type === 'subscribed') {
    $('status').textContent = `live · ${subscribed.size} channels`;
    return;
  }
  if (frame.type === 'error' && frame.code === 'limit_exceeded') {
    // Channels the connection could not take (or a subscribe sent too fast): asked again at the next subscribe.
    for (const c of frame.channels || []) subscribed.delete(c);
    return;
  }
  if (frame.type === 'error' && frame.code !== 'forbidden') {
    // The connection's token expired or was revoked: renew and reconnect, or return to sign-in.
    if (frame.code === 'token_expired' || frame.code === 'token_revoked') renew();
    return;
  }
  if (frame.type !== 'event') return;
  if (isEvent<OrgEvents, 'driver.location'>(frame, 'driver.location')) {
    for (const driver of frame.data.drivers) moveDriver(driver);
    renderSoon(true);
    return;
  }
  if (frame.channel.startsWith('planning.')) onPlanningEvent(frame as PlanningFrame);
  notify(eventWords(frame.name), describe(frame), new Date().toISOString());
}

/** A planning's event: an offer moved in place, a task's runsheet to be read again, the planning read again soon. */
function onPlanningEvent(frame: PlanningFrame): void {
  const data = (frame.data || {}) as PairData;
  const planningId = frame.channel.slice('planning.'.length);
  const planning = plannings.get(planningId);
  if (planning && frame.name.startsWith('pair.') && data.pair_id) {
    const known = planning.pairs.get(data.pair_id);
    const state =
      data.current_state || (frame.name === 'pair.broadcast' ? 'broadcasted' : frame.name.slice('pair.'.length));
    planning.pairs.set(data.pair_id, {
      ...known,
      id: data.pair_id,
      runsheet_id: data.runsheet_id ?? known?.runsheet_id,
      driver_id: data.driver_id ?? known?.driver_id,
      state,
      action: frame.name.slice('pair.'.length),
      reason: data.reason ?? null,
      at: data.happened_at_utc || new Date().toISOString(),
      first: known?.first || data.happened_at_utc || new Date().toISOString(),
    });
  }
  if (planning && frame.name.startsWith('task.') && data.runsheet_id) {
    taskCache.delete(rsKey(planningId, data.runsheet_id));
  }
  if (planning && frame.name === 'planning_job.status') planning.loaded = false;
  // The statuses and records behind what the event changed, read again shortly (one read for a burst).
  scheduleReload(planningId, frame.name.startsWith('pair.') ? 1500 : 400);
  renderSoon();
}
