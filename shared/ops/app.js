/**
 * The dispatcher's console (`/ops`, contract section 5; shared/ops/page.ts serves this file at /ops/assets/app.js, the
 * page's CSP allows no inline script). Runsheets first, grouped by what needs a person (X14's statuses, 4.7); drivers
 * with their state (A19/A15 duty, L2 positions, the offers of R2 and the runsheets they hold); the actions X16, X17 and
 * X18 where they apply; an attention list, kept live from `planning.<id>` and `org.<id>` (docs/live-operations.md).
 *
 * Everything a user typed (names, runsheet and planning names, addresses, notes, event names) reaches the DOM as text:
 * `textContent` and elements built here, never `innerHTML`; Leaflet's tooltips get such an element, never a string
 * (a string is HTML to Leaflet).
 */
(() => {
  const config = JSON.parse(document.getElementById('config').textContent);
  const $ = (id) => document.getElementById(id);
  /** An element holding `value` as text, with the attributes given (values as text too). */
  const text = (tag, value, attrs = {}) => {
    const el = document.createElement(tag);
    el.textContent = value == null ? '' : String(value);
    for (const [k, v] of Object.entries(attrs)) if (v != null) el.setAttribute(k, String(v));
    return el;
  };
  const button = (label, attrs = {}) => text('button', label, { type: 'button', ...attrs });

  // The roles that may watch an organisation; a driver or a partner is told so at sign-in.
  const WATCHERS = ['SysAdmin', 'OrgAdmin', 'OrgTransporter', 'Merchant'];
  /** The board's groups, in the order a dispatcher works them. */
  const GROUPS = [
    ['unassigned', 'Unassigned'],
    ['offered', 'Offered'],
    ['open', 'Not offered yet'],
    ['assigned', 'Assigned'],
    ['in_progress', 'In progress'],
    ['completed', 'Completed'],
    ['cancelled', 'Cancelled'],
  ];
  const DRIVER_STATES = { off_duty: 'off duty', available: 'available', offered: 'offered', on_runsheet: 'on' };
  const OPEN_PAIR = new Set(['created', 'broadcasted']);
  const REASONS = {
    declined_by_driver: 'declined',
    assigned_to_other_driver: 'taken by another driver',
    expired: 'expired unanswered',
    driver_at_capacity: 'closed: the driver reached their limit',
    runsheet_cancelled: 'closed: runsheet cancelled',
    runsheet_removed: 'closed: runsheet removed',
    driver_removed: 'closed: driver removed',
  };
  const DEFAULT_LOCATION_AGE_S = 1800;
  const MAX_PLANNINGS = 20;
  /** Channels one WebSocket connection may hold (contract 4.3). */
  const CHANNELS_PER_CONNECTION = 20;

  let token = null,
    refreshToken = null,
    claims = null,
    socket = null,
    map = null,
    driverLayer = null,
    stopLayer = null;
  /** While the drivers are first read: the map is fitted once at the end, not for each marker. */
  let bulk = false;
  let renewTimer = null,
    refreshTimer = null,
    tickTimer = null,
    keepaliveTimer = null,
    signedIn = false,
    renewals = 0,
    connections = 0;
  /** id → {id, name, on_duty?, service_types?, location?} */
  const drivers = new Map();
  /** id → {id, name, driverIds:Set, job, runsheets:Map(id → X14 runsheet), pairs:Map(id → pair), loaded} */
  const plannings = new Map();
  /** `<planning>/<runsheet>` → X22's tasks (for progress, lateness and failures). */
  const taskCache = new Map();
  const markers = new Map(),
    labels = new Map(),
    subscribed = new Set(),
    dismissed = new Set(),
    reloads = new Map();
  let selected = null; // {planningId, runsheetId, detail}

  const shortId = (id) => (id || '').slice(0, 8);
  const driverName = (id) => drivers.get(id)?.name || shortId(id);
  const rsKey = (planningId, runsheetId) => `${planningId}/${runsheetId}`;
  const roles = () => claims?.roles || [];
  const isSysAdmin = () => roles().includes('SysAdmin');
  // A SysAdmin (no organisation of their own) names the one to watch with ?org=<id>.
  const orgId = () => claims.org_id || new URLSearchParams(location.search).get('org');
  const decode = (jwt) => JSON.parse(atob(jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
  const enc = encodeURIComponent;
  const clockTime = (iso) => (iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : '');
  const naturally = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

  /** The service's clock, as its answers' `server_time` tell it: ages and countdowns do not depend on this machine's. */
  let clockOffset = 0;
  const now = () => Date.now() + clockOffset;

  async function api(path, init = {}) {
    const response = await fetch(path, {
      ...init,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
    const body = await response.json().catch(() => ({}));
    const served = typeof body.server_time === 'string' ? Date.parse(body.server_time) : Number.NaN;
    if (Number.isFinite(served)) clockOffset = served - Date.now();
    if (!response.ok)
      throw Object.assign(new Error(body.detail || body.title || `HTTP ${response.status}`), {
        status: response.status,
        body,
      });
    return body;
  }

  /** Every page of a list (`meta.next_page_token`), at most `pages` of them. */
  async function allPages(path, key, pages = 20) {
    const items = [];
    const join = path.includes('?') ? '&' : '?';
    for (let next = '', i = 0; i < pages; i++) {
      const list = await api(`${path}${next}`);
      items.push(...(list[key] || []));
      if (!list.meta?.next_page_token) break;
      next = `${join}page_token=${enc(list.meta.next_page_token)}`;
    }
    return items;
  }

  /** Runs `work` over `items`, `width` at a time. */
  async function eachLimited(items, width, work) {
    const queue = [...items];
    await Promise.all(
      Array.from({ length: width }, async () => {
        while (queue.length && signedIn) await work(queue.shift()).catch(() => {});
      }),
    );
  }

  // ---- Sign-in, renewal, sign-out -------------------------------------------------------------------------------

  $('signin').addEventListener('submit', async (event) => {
    event.preventDefault();
    $('error').textContent = '';
    try {
      const pasted = $('token').value.trim();
      if (pasted) {
        token = pasted;
        refreshToken = null;
      } else {
        const session = await api('/v1/auth/login', {
          method: 'POST',
          body: JSON.stringify({ user: { email: $('email').value, password: $('password').value } }),
        });
        token = session.bearer_token;
        refreshToken = session.refresh_token || null;
      }
      try {
        claims = decode(token);
      } catch {
        throw new Error('that is not a bearer token');
      }
      if (claims.exp * 1000 <= Date.now()) throw new Error('that token has expired');
      if (!roles().some((r) => WATCHERS.includes(r))) {
        throw new Error(
          'this page is for dispatchers (OrgAdmin, OrgTransporter, Merchant or SysAdmin); this account is ' +
            (roles().join(', ') || 'without a role'),
        );
      }
      await start();
    } catch (error) {
      signOut(`Sign-in failed: ${error.message}`);
    }
  });

  $('signout').addEventListener('click', () => {
    const [bearer, session] = [token, refreshToken];
    signOut('Signed out.');
    // Ends the refresh family too (X6), not only this page's copy of the tokens.
    if (session)
      fetch('/v1/auth/logout', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ refresh_token: session }),
      }).catch(() => {});
  });

  /** Which sign-in this is: work begun for an earlier one (a load, a renewal, a reconnect) stops when it sees so. */
  let session = 0;
  const current = (mine) => signedIn && mine === session;

  async function start() {
    signedIn = true;
    const mine = ++session;
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
  async function refresh(withDrivers) {
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
  function signOut(message) {
    signedIn = false;
    session += 1;
    renewing = null;
    clearTimeout(renewTimer);
    clearInterval(refreshTimer);
    clearInterval(tickTimer);
    clearInterval(keepaliveTimer);
    for (const timer of reloads.values()) clearTimeout(timer);
    reloads.clear();
    if (socket) {
      socket.onclose = null;
      socket.close();
      socket = null;
    }
    token = refreshToken = claims = null;
    selected = null;
    for (const m of [drivers, plannings, taskCache, markers, labels, subscribed, dismissed]) m.clear();
    if (map) {
      map.remove();
      map = driverLayer = stopLayer = null;
    }
    $('map').replaceChildren();
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
    $('password').value = '';
    $('token').value = '';
    $('error').textContent = message || '';
    $('status').textContent = 'signed out';
  }

  /**
   * Renews the bearer token (T1) before it expires: a quarter of its life or a minute ahead, whichever is sooner. A
   * pasted token cannot be renewed: the page returns to sign-in, saying why, when it expires.
   */
  function scheduleRenewal() {
    clearTimeout(renewTimer);
    const life = (claims.exp - (claims.iat || claims.exp - 3600)) * 1000;
    const ahead = refreshToken ? Math.min(60_000, life / 4) : 0;
    renewTimer = setTimeout(renew, Math.max(0, claims.exp * 1000 - Date.now() - ahead));
  }

  /** One renewal at a time: a refresh token is used once (a second use revokes the family, contract 3). */
  let renewing = null;
  function renew() {
    if (!renewing) {
      const mine = session;
      renewing = renewOnce(mine).finally(() => {
        if (mine === session) renewing = null;
      });
    }
    return renewing;
  }

  async function renewOnce(mine) {
    const expiredAt = new Date(claims.exp * 1000).toLocaleTimeString();
    if (!refreshToken) return signOut(`Your session expired at ${expiredAt}: sign in again.`);
    try {
      const next = await api('/v1/auth/refresh', {
        method: 'POST',
        body: JSON.stringify({ refresh_token: refreshToken }),
      });
      if (!current(mine)) return;
      token = next.bearer_token;
      refreshToken = next.refresh_token;
      claims = decode(token);
      renewals += 1;
      document.body.dataset.renewals = String(renewals);
      scheduleRenewal();
      // The connection was opened with the old token: open a new one with the new token and subscribe again.
      if (socket) socket.close();
    } catch (error) {
      if (!current(mine)) return;
      if (error.status === undefined && claims.exp * 1000 > Date.now() + 5000) {
        renewTimer = setTimeout(renew, 5000); // the network, not the session: try again shortly
        return;
      }
      signOut(`Your session ended (${error.message}): sign in again.`);
    }
  }

  // ---- The live connection --------------------------------------------------------------------------------------

  function connect() {
    const base = config.websocketUrl || `${(location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host}/ws`;
    const opened = new WebSocket(`${base}?token=${enc(token)}`);
    socket = opened;
    socket.onopen = () => {
      connections += 1;
      document.body.dataset.connections = String(connections);
      document.body.dataset.pongs = '0';
      // API Gateway closes a connection that says nothing for 10 minutes: a keepalive frame every third of that.
      clearInterval(keepaliveTimer);
      keepaliveTimer = setInterval(() => {
        if (opened.readyState === 1) opened.send(JSON.stringify({ action: 'ping' }));
      }, config.keepaliveMs || 200_000);
      subscribed.clear();
      const channels = [`user.${claims.sub}`];
      if (orgId()) channels.push(`org.${orgId()}`);
      if (isSysAdmin()) channels.push('drivers.freelance');
      for (const id of plannings.keys()) channels.push(`planning.${id}`);
      subscribe(channels);
      // What happened while the connection was down: the plannings read again, their offers (R2) too.
      if (connections > 1)
        for (const [id, planning] of plannings) {
          planning.pairsDirty = true;
          scheduleReload(id, 100);
        }
    };
    socket.onmessage = (message) => onFrame(JSON.parse(message.data));
    // Closed by the gateway (idle, or its 2-hour limit), by a renewal, or by the network: connect again and subscribe
    // again after a second.
    const mine = session;
    socket.onclose = (event) => {
      if (socket === opened) clearInterval(keepaliveTimer);
      document.body.dataset.closed = String(event.code);
      if (!current(mine) || socket !== opened) return;
      if (claims.exp * 1000 <= Date.now()) return renew();
      $('status').textContent = 'disconnected · reconnecting…';
      setTimeout(() => {
        if (current(mine) && socket === opened) connect();
      }, 1000);
    };
  }

  function subscribe(channels) {
    const fresh = channels.filter((c) => !subscribed.has(c));
    if (fresh.length === 0 || !socket || socket.readyState !== 1) return;
    for (const c of fresh) subscribed.add(c);
    socket.send(JSON.stringify({ action: 'subscribe', channels: fresh }));
  }

  function onFrame(frame) {
    if (frame.type === 'pong') {
      document.body.dataset.pongs = String(Number(document.body.dataset.pongs || 0) + 1);
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
    if (frame.name === 'driver.location') {
      for (const driver of frame.data.drivers) moveDriver(driver);
      renderSoon(true);
      return;
    }
    const data = frame.data || {};
    if (frame.channel.startsWith('planning.')) {
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
    notify(frame.name, describe(frame), new Date().toISOString());
  }

  /** A line a dispatcher reads for an event: the runsheet's and the driver's names where it has them. */
  function describe(frame) {
    const data = frame.data || {};
    const planningId = frame.channel.startsWith('planning.') ? frame.channel.slice('planning.'.length) : null;
    const runsheet = planningId && data.runsheet_id ? plannings.get(planningId)?.runsheets.get(data.runsheet_id) : null;
    const parts = [];
    if (data.runsheet_id) parts.push(runsheet?.name || data.runsheet_id);
    if (data.task_ref || data.task_id) parts.push(`task ${data.task_ref || data.task_id}`);
    const driverId = data.driver_id || data.driver?.id;
    if (driverId) parts.push(data.driver?.name || driverName(driverId));
    if (data.reason) parts.push(REASONS[data.reason] || data.reason);
    if (data.failure_reason) parts.push(data.failure_reason.replace(/_/g, ' '));
    return parts.length ? parts.join(' · ') : frame.channel;
  }

  // ---- Loading ----------------------------------------------------------------------------------------------------

  /**
   * The organisation's drivers with their names and duty state (A19 for its admin; A15, then A16 for the duty, for
   * SysAdmin with ?org=), then each one's last position (L2, six at a time), so that located drivers show at once.
   * Other roles learn the drivers of their plannings (P3) and read them one by one (`loadPlanningDrivers`).
   */
  async function loadDrivers(first = true) {
    const org = orgId();
    if (!org) return;
    let users = [];
    if (isSysAdmin()) {
      users = await allPages(`/v1/admin/users/by-role?role_name=OrgDriver&per_page=100&org_id=${enc(org)}`, 'users');
    } else if (roles().includes('OrgAdmin')) {
      users = (await allPages('/v1/org/users?per_page=100', 'users')).filter((user) =>
        (user.roles || []).some((r) => r === 'OrgDriver' || r === 'Driver'),
      );
    } else return;
    // A refresh (every minute) takes the duty states from the list and reads only the drivers new to the page.
    const fresh = first ? users : users.filter((u) => !drivers.get(u.id)?.listed);
    for (const user of users) learnDriver({ ...user, listed: true });
    bulk = first;
    await eachLimited(
      fresh.map((u) => u.id),
      6,
      async (id) => {
        if (isSysAdmin() && !drivers.get(id)?.driver_profile_read) {
          const full = await api(`/v1/admin/users/${enc(id)}`).catch(() => null);
          if (full) learnDriver({ ...full, driver_profile_read: true });
        }
        await locate(id);
      },
    );
    bulk = false;
    renderSoon();
  }

  function learnDriver(user) {
    const known = drivers.get(user.id) || { id: user.id };
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

  async function locate(id) {
    const found = await api(`/v1/driver-locations/${enc(id)}`).catch(() => null);
    if (found?.location) moveDriver({ ...found.location, user_id: found.location.user_id || id });
  }

  /**
   * The newest plannings with runsheets, each read whole once and its statuses kept fresh: as many as the connection
   * has channels for (20 a connection, contract 4.3, less the user's, the organisation's and SysAdmin's freelance
   * drivers'), so that every planning shown is live. One that falls out of them is dropped, and the connection opened
   * again without its channel.
   */
  async function loadPlannings() {
    const org = orgId();
    const scoped = org && isSysAdmin() ? `&org_id=${enc(org)}` : '';
    const room = CHANNELS_PER_CONNECTION - (isSysAdmin() ? 3 : 2);
    const list = await api(`/v1/plannings?per_page=${MAX_PLANNINGS}${scoped}`);
    // An empty planning needs nobody.
    const newest = list.plannings.filter((p) => p.total_runsheets).slice(0, room);
    const kept = new Set(newest.map((p) => p.id));
    let dropped = false;
    for (const id of [...plannings.keys()])
      if (!kept.has(id)) {
        plannings.delete(id);
        dropped ||= subscribed.has(`planning.${id}`);
        if (selected?.planningId === id) closeDetail();
      }
    if (dropped) socket?.close(); // its onclose connects again, subscribing to the plannings kept
    for (const p of newest) {
      const known = plannings.get(p.id);
      if (!known) {
        plannings.set(p.id, {
          id: p.id,
          name: p.name,
          driverIds: new Set(),
          job: null,
          runsheets: new Map(),
          pairs: new Map(),
          loaded: false,
        });
      } else known.name = p.name;
    }
    subscribe([...plannings.keys()].map((id) => `planning.${id}`));
    renderFilter();
    await eachLimited([...plannings.keys()], 3, (id) => loadPlanning(id));
    renderAll();
  }

  /** One planning: P3 once (its drivers and job), X14's statuses, R2's offers, and the tasks of started runsheets. */
  async function loadPlanning(planningId) {
    const planning = plannings.get(planningId);
    if (!planning) return;
    if (!planning.loaded) {
      const whole = await api(`/v1/plannings/${enc(planningId)}`);
      planning.loaded = true;
      planning.name = whole.name;
      planning.job = whole.job || null;
      planning.driverIds = new Set((whole.drivers || []).map((d) => d.id));
      const unknown = [...planning.driverIds].filter((id) => !drivers.has(id));
      for (const d of whole.drivers || []) if (!drivers.has(d.id)) drivers.set(d.id, { id: d.id, name: d.name });
      await eachLimited(unknown, 6, async (id) => {
        if (roles().includes('OrgTransporter')) {
          const found = await api(`/v1/org/users/${enc(id)}`).catch(() => null);
          if (found?.user) learnDriver(found.user);
        }
        await locate(id);
      });
    }
    // R2 (with every pair's tasks) is the heavy read: at first and after a reconnect (events may have been missed);
    // in between the pair events themselves keep the offers current.
    const readPairs = !planning.pairsRead || planning.pairsDirty;
    const [runsheets, records] = await Promise.all([
      allPages(`/v1/plannings/${enc(planningId)}/runsheets?per_page=200`, 'runsheets'),
      readPairs ? allPages(`/v1/broadcast-plans/${enc(planningId)}/pairs`, 'pair_records') : null,
    ]);
    planning.runsheets = new Map(runsheets.map((r) => [r.id, r]));
    for (const r of runsheets) {
      const who = r.assigned_driver;
      if (who?.name && !drivers.get(who.id)?.name) learnDriver({ id: who.id, name: who.name });
    }
    if (records) {
      planning.pairsRead = true;
      planning.pairsDirty = false;
      planning.pairs = new Map(
        records.map((r) => {
          const last = r.statuses[r.statuses.length - 1] || {};
          if (r.pair.driver.name && !drivers.get(r.pair.driver.id)?.name)
            learnDriver({ id: r.pair.driver.id, name: r.pair.driver.name });
          return [
            r.id,
            {
              id: r.id,
              runsheet_id: r.pair.runsheet.id,
              driver_id: r.pair.driver.id,
              state: r.current_state,
              reason: last.reason || null,
              action: last.action,
              at: last.happened_at_utc,
              first: r.statuses[0]?.happened_at_utc,
            },
          ];
        }),
      );
    }
    // Started runsheets: their tasks (X22), for failures and lateness; read again when their progress moves.
    const moved = runsheets.filter((r) => {
      if (r.status !== 'in_progress' && r.status !== 'completed') return false;
      const cached = taskCache.get(rsKey(planningId, r.id));
      return !cached || cached.done !== r.tasks_done || cached.status !== r.status;
    });
    await eachLimited(moved.slice(0, 100), 4, async (r) => {
      const found = await api(`/v1/plannings/${enc(planningId)}/runsheets/${enc(r.id)}`);
      taskCache.set(rsKey(planningId, r.id), { done: r.tasks_done, status: r.status, tasks: found.runsheet.tasks });
    });
    if (selected?.planningId === planningId) await loadSelected();
  }

  /** A planning read again shortly after its events (a burst of events is one read). */
  function scheduleReload(planningId, delay) {
    if (!plannings.has(planningId) || reloads.has(planningId)) return;
    reloads.set(
      planningId,
      setTimeout(async () => {
        reloads.delete(planningId);
        if (!signedIn) return;
        await loadPlanning(planningId).catch(() => {});
        renderAll();
      }, delay),
    );
  }

  async function loadNotifications() {
    // The caller's own notification log (N2); the organisation's live events join it as they come. A role whose log
    // is not open to it just sees the live events.
    if (!roles().some((r) => r === 'SysAdmin' || r === 'Merchant')) return;
    try {
      const list = await api('/v1/notifications?limit=10');
      for (const n of list.notifications.reverse())
        notify(n.event_type || n.type || 'notification', n.title || '', n.created_at || n.server_time);
    } catch {}
  }

  // ---- Derived state -----------------------------------------------------------------------------------------------

  const parametersOf = (planning) => ({
    maxAge: planning?.job?.max_location_age_s || DEFAULT_LOCATION_AGE_S,
    perDriver: planning?.job?.max_runsheets_per_driver || 1,
    ttl: planning?.job?.offer_ttl_s || 600,
  });

  /** How old a driver's last fix is, in seconds (Infinity without one). */
  const ageOf = (driver) =>
    driver?.location ? Math.max(0, (now() - Date.parse(driver.location.server_time)) / 1000) : Infinity;

  /** The shortest `max_location_age_s` of the plannings the driver belongs to: past it, their position is stale. */
  function staleAfter(driverId) {
    let limit = Infinity;
    for (const p of plannings.values()) if (p.driverIds.has(driverId)) limit = Math.min(limit, parametersOf(p).maxAge);
    return limit === Infinity ? DEFAULT_LOCATION_AGE_S : limit;
  }
  const isStale = (driver) => driver.location != null && ageOf(driver) > staleAfter(driver.id);

  /** What a driver is doing: holding a runsheet, offered one, off duty, or available (with the runsheet named). */
  function stateOf(driverId) {
    if (!activity) activity = currentActivity();
    const held = activity.holding.get(driverId);
    if (held) return { state: 'on_runsheet', runsheet: held };
    if (drivers.get(driverId)?.on_duty === false) return { state: 'off_duty' };
    const offered = activity.offered.get(driverId);
    if (offered) return { state: 'offered', runsheet: offered };
    return { state: 'available' };
  }

  /**
   * Who holds which runsheet and who is offered one, in one pass over the plannings (a render asks it for every
   * driver); forgotten whenever what it is made of changes (`invalidate`).
   */
  let activity = null;
  function currentActivity() {
    const holding = new Map();
    const offered = new Map();
    for (const p of plannings.values()) {
      for (const r of p.runsheets.values())
        if (
          (r.status === 'assigned' || r.status === 'in_progress') &&
          r.assigned_driver &&
          !holding.has(r.assigned_driver.id)
        )
          holding.set(r.assigned_driver.id, r);
      for (const pair of p.pairs.values()) {
        if (!OPEN_PAIR.has(pair.state) || offered.has(pair.driver_id)) continue;
        const r = p.runsheets.get(pair.runsheet_id);
        if (r && r.status === 'offered') offered.set(pair.driver_id, r);
      }
    }
    return { holding, offered };
  }

  const seen = (driver) => {
    if (!driver.location) return 'no location';
    const age = ageOf(driver);
    if (age < 60) return 'seen just now';
    if (age < 3600) return `seen ${Math.floor(age / 60)} min ago`;
    return `seen ${Math.floor(age / 3600)} h ${Math.floor((age % 3600) / 60)} min ago`;
  };

  const countdown = (iso, short = false) => {
    const left = Math.max(0, Math.round((Date.parse(iso) - now()) / 1000));
    return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}${short ? '' : ' left'}`;
  };
  /** A countdown the page keeps current every second (`tick`) without rebuilding what holds it. */
  const countdownSpan = (iso, short = false) =>
    text('span', countdown(iso, short), { class: 'countdown', 'data-expires': iso, 'data-short': String(short) });

  /** Tasks of a started runsheet that are late: not done by their drop-off window's end, or done after it. */
  function lateTasks(tasks) {
    return (tasks || []).filter((t) => isLate(t));
  }
  function isLate(task) {
    const end = Date.parse(task.to_time_window?.end_time_utc || '');
    if (!Number.isFinite(end)) return false;
    if (task.status === 'delivered' || task.status === 'failed') {
      const doneAt = (task.timeline || []).findLast?.((e) => e.type === task.status)?.happened_at_utc;
      return doneAt ? Date.parse(doneAt) > end : false;
    }
    return now() > end;
  }

  /** An element saying `sentence`; an offered runsheet's time left is a countdown kept current by `tick`. */
  function sentenceNode(tag, sentence, r, attrs = {}) {
    const el = text(tag, sentence, attrs);
    if (r.status === 'offered' && r.offer_expires_at) {
      el.textContent = sentence.replace(/\d+:\d\d left$/, '');
      el.append(countdownSpan(r.offer_expires_at));
    }
    return el;
  }

  function statusSentence(r, planningId) {
    switch (r.status) {
      case 'unassigned':
        return r.unassigned_reason?.detail || 'no driver took it';
      case 'offered':
        return r.offer_expires_at
          ? `wave ${r.wave} · ${r.offers_open} open · ${countdown(r.offer_expires_at)}`
          : `wave ${r.wave} · next wave coming`;
      case 'assigned':
        return `assigned ${clockTime(r.assigned_at)}`;
      case 'in_progress': {
        const late = lateTasks(taskCache.get(rsKey(planningId, r.id))?.tasks).length;
        return `${r.tasks_done} of ${r.tasks_total} done${late ? ` · ${late} late` : ''}`;
      }
      case 'completed':
        return `completed ${clockTime(r.completed_at)}`;
      case 'cancelled':
        return `cancelled${r.cancel_reason ? `: ${r.cancel_reason}` : ''}`;
      default:
        return `${r.tasks_total ?? ''} tasks, no job yet`;
    }
  }

  const filterValue = () => $('planning-filter').value;
  const visiblePlannings = () =>
    [...plannings.values()].filter((p) => !filterValue() || p.id === filterValue()).filter((p) => p.runsheets.size);

  /** What needs a person now, most urgent first. */
  function attentionItems() {
    const items = [];
    const at = now();
    for (const p of visiblePlannings()) {
      const { ttl } = parametersOf(p);
      const soon = Math.min(120, Math.max(5, ttl * 0.3)) * 1000;
      for (const r of p.runsheets.values()) {
        const name = r.name || r.id;
        if (r.status === 'unassigned') {
          items.push({
            kind: 'unassigned',
            planningId: p.id,
            runsheet: r,
            text: `${name} · unassigned: ${statusSentence(r, p.id)}`,
          });
        }
        if (r.status === 'offered' && r.offer_expires_at && Date.parse(r.offer_expires_at) - at < soon) {
          items.push({
            kind: 'expiring',
            planningId: p.id,
            runsheet: r,
            text: `${name} · wave ${r.wave}: no answer, offer expires in `,
            expires: r.offer_expires_at,
          });
        }
        for (const task of taskCache.get(rsKey(p.id, r.id))?.tasks || []) {
          if (task.status !== 'failed') continue;
          const key = `failed:${p.id}:${r.id}:${task.id}`;
          if (dismissed.has(key)) continue;
          const failure = (task.timeline || []).findLast?.((e) => e.type === 'failed');
          const reason = failure?.failure_reason ? ` (${failure.failure_reason.replace(/_/g, ' ')})` : '';
          const who = r.assigned_driver ? ` · ${driverName(r.assigned_driver.id)}` : '';
          items.push({
            kind: 'failed_task',
            key,
            planningId: p.id,
            runsheet: r,
            text: `${name} · task ${task.task_ref || task.id} failed${reason}${who}`,
          });
        }
      }
    }
    for (const driver of drivers.values()) {
      const { state, runsheet } = stateOf(driver.id);
      if (state !== 'on_runsheet' || !isStale(driver)) continue;
      items.push({
        kind: 'stale_driver',
        driverId: driver.id,
        runsheet,
        planningId: runsheet.planning_id || planningOf(runsheet),
        text: `${driverName(driver.id)} · ${seen(driver)} while on ${runsheet.name || runsheet.id}`,
      });
    }
    return items;
  }

  function planningOf(runsheet) {
    for (const p of plannings.values()) if (p.runsheets.get(runsheet.id) === runsheet) return p.id;
    return null;
  }

  // ---- Rendering ---------------------------------------------------------------------------------------------------

  /** Events come in bursts: what they change is drawn at most five times a second. */
  let renderTimer = null;
  let renderEverything = false;
  /** `onlyDrivers`: what changed is positions (the board and the detail stay as they are). */
  function renderSoon(onlyDrivers = false) {
    activity = null;
    renderEverything ||= !onlyDrivers;
    if (renderTimer) return;
    renderTimer = setTimeout(() => {
      renderTimer = null;
      const everything = renderEverything;
      renderEverything = false;
      if (!signedIn) return;
      if (everything) renderAll();
      else {
        renderDrivers();
        renderAttention();
      }
    }, 200);
  }

  function renderAll() {
    activity = null;
    renderBoard();
    renderDrivers();
    renderAttention();
    renderDetail();
  }

  /** Re-rendering keeps the keyboard where it was: the same runsheet's button gets the focus back. */
  function keepingFocus(render) {
    const active = document.activeElement;
    const focusKey = active?.dataset?.focusKey;
    render();
    if (focusKey && document.activeElement !== active)
      document.querySelector(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus();
  }

  /**
   * Puts `nodes` in `container` unless it already shows exactly that: a refresh that changes nothing leaves the
   * elements (and a click or hover on them) alone.
   */
  function show(container, nodes) {
    const steady = (html) => html.replace(/(<span class="countdown"[^>]*>)[^<]*/g, '$1');
    if (steady(nodes.map((node) => node.outerHTML).join('')) === steady(container.innerHTML)) return;
    container.replaceChildren(...nodes);
  }

  function renderFilter() {
    const filter = $('planning-filter');
    const chosen = filter.value;
    show(filter, [
      text('option', 'All plannings', { value: '' }),
      ...[...plannings.values()].map((p) => text('option', p.name, { value: p.id })),
    ]);
    filter.value = plannings.has(chosen) ? chosen : '';
  }
  $('planning-filter').addEventListener('change', () => renderAll());

  function renderBoard() {
    const shown = visiblePlannings();
    const many = shown.length > 1;
    const groups = new Map(GROUPS.map(([status]) => [status, []]));
    for (const p of shown) for (const r of p.runsheets.values()) groups.get(r.status)?.push({ p, r });
    const sections = [];
    for (const [status, title] of GROUPS) {
      const rows = groups.get(status);
      if (!rows.length) continue;
      rows.sort(
        (a, b) =>
          naturally.compare(a.r.name || a.r.id, b.r.name || b.r.id) ||
          naturally.compare(a.r.id, b.r.id) ||
          naturally.compare(a.p.name, b.p.name),
      );
      const section = text('section', '', { 'data-group': status, class: `group group-${status}` });
      section.append(text('h3', `${title} (${rows.length})`));
      const list = document.createElement('ul');
      for (const { p, r } of rows) {
        const isSelected = selected?.planningId === p.id && selected?.runsheetId === r.id;
        const item = text('li', '', {
          'data-runsheet': r.id,
          'data-planning': p.id,
          'data-status': r.status,
          class: isSelected ? 'runsheet selected' : 'runsheet',
        });
        const open = button(r.name || r.id, {
          class: 'rs-open',
          title: r.id,
          'aria-pressed': isSelected ? 'true' : 'false',
          'data-focus-key': `rs:${p.id}:${r.id}`,
        });
        open.addEventListener('click', () => select(p.id, r.id));
        const detail = sentenceNode('span', statusSentence(r, p.id), r, { class: 'rs-detail' });
        item.append(
          open,
          text('span', r.assigned_driver ? driverName(r.assigned_driver.id) || r.assigned_driver.name : '', {
            class: 'rs-driver',
          }),
          detail,
        );
        if (many) item.append(text('span', p.name, { class: 'rs-planning' }));
        list.append(item);
      }
      section.append(list);
      sections.push(section);
    }
    keepingFocus(() =>
      show($('board'), sections.length ? sections : [text('p', 'No runsheets yet.', { class: 'empty' })]),
    );
  }

  function renderDrivers() {
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
          row.dataset.latitude = d.location.latitude;
          row.dataset.longitude = d.location.longitude;
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
    $('driver-count').textContent = rows.length;
    // A name learnt after the marker was made (a list, a pair record) reaches its label, as text; colours by state.
    for (const [id, label] of labels) if (label.textContent !== driverName(id)) label.textContent = driverName(id);
    for (const [id, marker] of markers) {
      const style = { color: STATE_COLOURS[stateOf(id).state], fillOpacity: isStale(drivers.get(id)) ? 0.2 : 0.85 };
      if (marker.options.color === style.color && marker.options.fillOpacity === style.fillOpacity) continue;
      marker.setStyle?.(style);
    }
    if (!map) renderGrid();
  }
  const STATE_COLOURS = { available: '#2a9d8f', offered: '#e9a100', on_runsheet: '#1d5fbf', off_duty: '#8a8f98' };

  function renderAttention() {
    const items = attentionItems();
    $('attention-count').textContent = String(items.length);
    $('attention-link').classList.toggle('calm', items.length === 0);
    $('attention-empty').hidden = items.length > 0;
    keepingFocus(() =>
      show(
        $('attention-list'),
        items.map((item) => {
          const li = text('li', '', {
            'data-kind': item.kind,
            'data-runsheet': item.runsheet?.id,
            'data-driver': item.driverId,
            class: `attention-${item.kind}`,
          });
          const open = button(item.text, {
            class: 'attention-open',
            'data-focus-key': `att:${item.kind}:${item.planningId}:${item.runsheet?.id}:${item.driverId || ''}:${item.key || ''}`,
          });
          if (item.expires) open.append(countdownSpan(item.expires, true));
          open.addEventListener('click', () => {
            if (item.runsheet && item.planningId) select(item.planningId, item.runsheet.id);
          });
          li.append(open);
          if (item.key) {
            const done = button('Seen', {
              class: 'dismiss',
              'aria-label': `mark as seen: ${item.text}`,
              'data-focus-key': `seen:${item.key}`,
            });
            done.addEventListener('click', () => {
              dismissed.add(item.key);
              renderAttention();
            });
            li.append(done);
          }
          return li;
        }),
      ),
    );
  }

  /** Every second: the countdowns and the "seen n min ago" of what is shown, without rebuilding it. */
  function tick() {
    for (const el of document.querySelectorAll('.countdown[data-expires]')) {
      const left = countdown(el.dataset.expires, el.dataset.short === 'true');
      if (el.textContent !== left) el.textContent = left;
    }
    for (const row of $('drivers').children) {
      const driver = drivers.get(row.dataset.driver);
      const cell = row.querySelector('.driver-seen');
      if (driver && cell && cell.textContent !== seen(driver)) cell.textContent = seen(driver);
    }
    // Offers entering their last seconds: the attention list is recomputed every second (cheap, and left alone when
    // nothing in it changed); drivers going stale every 5 s.
    renderAttention();
    if (Math.floor(Date.now() / 1000) % 5 === 0) renderDrivers();
  }

  // ---- The map -----------------------------------------------------------------------------------------------------

  function setUpMap() {
    if (!window.L) return; // no map library: the plain grid below places the dots
    // On a phone one finger scrolls the page, not the map (two pan and zoom it).
    map = L.map('map', { zoomControl: true, dragging: !L.Browser.mobile }).setView([1.3, 103.8], 11);
    if (config.tiles && config.tiles !== 'none') {
      L.tileLayer(config.tiles, { maxZoom: 19, attribution: '&copy; OpenStreetMap contributors' }).addTo(map);
    }
    driverLayer = L.layerGroup().addTo(map);
    stopLayer = L.layerGroup().addTo(map);
  }

  function moveDriver(fix) {
    const known = drivers.get(fix.user_id) || { id: fix.user_id };
    // Newer by version; a driver moved to another organisation (A25) starts again at 1, so a later fix counts too.
    const before = known.location;
    if (before && before.version >= fix.version && Date.parse(before.server_time) >= Date.parse(fix.server_time))
      return;
    known.location = fix;
    drivers.set(fix.user_id, known);
    if (!known.name) nameOf(fix.user_id);
    if (!map) return;
    const marker = markers.get(fix.user_id);
    if (marker) marker.setLatLng([fix.latitude, fix.longitude]);
    else {
      const label = text('span', driverName(fix.user_id), { 'data-label': fix.user_id, class: 'driver-label' });
      labels.set(fix.user_id, label);
      markers.set(
        fix.user_id,
        L.circleMarker([fix.latitude, fix.longitude], {
          radius: 7,
          color: STATE_COLOURS[stateOf(fix.user_id).state],
          fillOpacity: 0.85,
        })
          .bindTooltip(label, { permanent: true, direction: 'right', offset: [8, 0], className: 'driver-tip' })
          .addTo(driverLayer),
      );
      if (!selected && !bulk) fitMap();
    }
  }

  /**
   * A driver heard of only by a position (one who joined after sign-in): their name read once, A23 (A16 for
   * SysAdmin), so that nobody shows as an id for long. A freelance driver's is not the organisation's to read.
   */
  const naming = new Set();
  function nameOf(id) {
    if (naming.has(id) || !orgId()) return;
    const path = isSysAdmin()
      ? `/v1/admin/users/${enc(id)}`
      : roles().some((r) => r === 'OrgAdmin' || r === 'OrgTransporter')
        ? `/v1/org/users/${enc(id)}`
        : null;
    if (!path) return;
    naming.add(id);
    const mine = session;
    api(path)
      .then((found) => {
        const user = found.user || found;
        if (!current(mine) || user.org_id !== orgId()) return;
        learnDriver(user);
        renderSoon();
      })
      .catch(() => {});
  }

  /** Every driver in view (a driver newly heard of widens it); with a runsheet selected, its stops and driver. */
  function fitMap() {
    if (!map) return;
    const points = [];
    if (selected && stopLayer.getLayers().length) {
      for (const layer of stopLayer.getLayers()) points.push(layer.getLatLng());
      const driverId = selected.detail?.assigned_driver?.id;
      if (driverId && markers.has(driverId)) points.push(markers.get(driverId).getLatLng());
    } else for (const m of markers.values()) points.push(m.getLatLng());
    if (points.length === 0) return;
    const bounds = L.latLngBounds(points);
    if (points.length === 1) map.setView(bounds.getCenter(), 14);
    else map.fitBounds(bounds.pad(0.15), { maxZoom: 15 });
    document.body.dataset.fitted = String(points.length);
  }

  /** Without the map library: the drivers' positions scaled into the map's box. */
  function renderGrid() {
    const all = [...drivers.values()].filter((d) => d.location).map((d) => ({ ...d.location, id: d.id }));
    if (all.length === 0) return;
    const lats = all.map((d) => d.latitude),
      lons = all.map((d) => d.longitude);
    const [minLat, maxLat, minLon, maxLon] = [
      Math.min(...lats),
      Math.max(...lats),
      Math.min(...lons),
      Math.max(...lons),
    ];
    $('map').replaceChildren(
      ...all.map((d) => {
        const dot = text('div', '', { class: 'grid-dot', title: d.id, 'aria-label': driverName(d.id) });
        dot.style.left = `${5 + 90 * ((d.longitude - minLon) / (maxLon - minLon || 1))}%`;
        dot.style.top = `${5 + 90 * (1 - (d.latitude - minLat) / (maxLat - minLat || 1))}%`;
        return dot;
      }),
    );
  }

  function drawStops(tasks) {
    if (!map) return;
    stopLayer.clearLayers();
    for (const task of tasks || []) {
      const name = task.task_ref || task.id;
      for (const [kind, address, colour] of [
        ['pickup', task.from_address, '#6a4c93'],
        ['dropoff', task.to_address, '#c1121f'],
      ]) {
        if (address?.latitude == null || address?.longitude == null) continue;
        const label = text('span', `${name} ${kind === 'pickup' ? 'pickup' : 'drop-off'}`, {
          class: 'stop-label',
          'data-stop': `${task.id}:${kind}`,
        });
        L.circleMarker([address.latitude, address.longitude], {
          radius: 6,
          color: colour,
          weight: 3,
          fillColor: '#fff',
          fillOpacity: 1,
        })
          .bindTooltip(label, { permanent: true, direction: 'left', offset: [-8, 0], className: 'stop-tip' })
          .addTo(stopLayer);
      }
    }
    fitMap();
  }

  // ---- The selected runsheet and the actions -----------------------------------------------------------------------

  async function select(planningId, runsheetId) {
    selected = { planningId, runsheetId, detail: plannings.get(planningId)?.runsheets.get(runsheetId) || null };
    $('action-result').textContent = '';
    $('assign-choices').hidden = true;
    $('cancel-form').hidden = true;
    renderBoard();
    renderDetail();
    $('detail').hidden = false;
    // The keyboard goes where the runsheet is shown: its title, then its actions.
    $('detail-title').focus();
    await loadSelected();
    drawStops(selected?.detail?.tasks);
    if (window.matchMedia?.('(max-width: 760px)').matches) $('detail').scrollIntoView({ block: 'start' });
  }

  $('detail-close').addEventListener('click', () => {
    const was = selected;
    closeDetail();
    if (was)
      document
        .querySelector(`[data-focus-key="rs:${CSS.escape(was.planningId)}:${CSS.escape(was.runsheetId)}"]`)
        ?.focus();
  });

  function closeDetail() {
    selected = null;
    $('detail').hidden = true;
    stopLayer?.clearLayers();
    fitMap();
    renderBoard();
  }

  async function loadSelected() {
    if (!selected) return;
    const { planningId, runsheetId } = selected;
    try {
      const found = await api(`/v1/plannings/${enc(planningId)}/runsheets/${enc(runsheetId)}`);
      if (selected?.planningId !== planningId || selected?.runsheetId !== runsheetId) return;
      selected.detail = found.runsheet;
      const listed = plannings.get(planningId)?.runsheets;
      if (listed?.has(runsheetId)) {
        const { tasks, ...status } = found.runsheet;
        listed.set(runsheetId, { ...listed.get(runsheetId), ...status });
      }
      if (found.runsheet.status === 'in_progress' || found.runsheet.status === 'completed')
        taskCache.set(rsKey(planningId, runsheetId), {
          done: found.runsheet.tasks_done,
          status: found.runsheet.status,
          tasks: found.runsheet.tasks,
        });
    } catch (error) {
      $('action-result').textContent = `Could not read the runsheet: ${error.message}`;
    }
    renderDetail();
  }

  const PAIR_WORDS = {
    created: 'to be offered',
    broadcasted: 'offered',
    accepted: 'accepted',
    rejected: 'declined',
    withdrawn: 'withdrew',
  };
  function pairWords(pair) {
    if (pair.state === 'rejected') {
      if (!pair.reason || pair.reason === 'declined_by_driver') return 'declined';
      return REASONS[pair.reason] || `closed: ${pair.reason.replace(/_/g, ' ')}`;
    }
    if (pair.state === 'accepted' && pair.action === 'assigned') return 'assigned by a dispatcher';
    return PAIR_WORDS[pair.state] || pair.state;
  }

  function renderDetail() {
    if (!selected) return;
    const { planningId, runsheetId } = selected;
    const planning = plannings.get(planningId);
    const r = selected.detail || planning?.runsheets.get(runsheetId);
    if (!r) return;
    const listed = planning?.runsheets.get(runsheetId) || r;
    $('detail-title').textContent = r.name || r.id;
    const sentence = statusSentence(listed, planningId);
    const label = GROUPS.find(([status]) => status === listed.status)?.[1] || listed.status;
    const status = sentenceNode(
      'span',
      sentence.startsWith(listed.status) ? sentence : `${label} · ${sentence}`,
      listed,
    );
    show($('detail-status'), [status]);
    $('detail-status').dataset.status = listed.status;
    $('detail-driver').textContent = listed.assigned_driver ? driverName(listed.assigned_driver.id) : 'nobody yet';
    $('detail-planning').textContent = planning ? `· ${planning.name}` : '';
    show(
      $('detail-tasks'),
      (r.tasks || []).map((task) => {
        const late = isLate(task);
        const last = (task.timeline || [])[task.timeline.length - 1];
        const failure = task.status === 'failed' ? (task.timeline || []).findLast?.((e) => e.type === 'failed') : null;
        const where = [task.from_address?.street_address, task.to_address?.street_address].filter(Boolean).join(' → ');
        const li = text('li', '', { 'data-task': task.id, 'data-status': task.status, 'data-late': String(late) });
        li.append(
          text('strong', task.task_ref || task.id),
          text('span', ` ${where}`),
          text('span', ` · ${task.status.replace('_', ' ')}`, { class: `task-status task-${task.status}` }),
        );
        if (failure?.failure_reason) li.append(text('span', ` (${failure.failure_reason.replace(/_/g, ' ')})`));
        if (failure?.note) li.append(text('span', ` “${failure.note}”`));
        if (last) li.append(text('span', ` ${clockTime(last.happened_at_utc)}`, { class: 'muted' }));
        if (late) li.append(text('span', ' late', { class: 'late' }));
        return li;
      }),
    );
    const offers = [...(planning?.pairs.values() || [])]
      .filter((p) => p.runsheet_id === runsheetId)
      .sort((a, b) => String(a.first || a.at).localeCompare(String(b.first || b.at)));
    show(
      $('detail-offers'),
      offers.length
        ? offers.map((pair) =>
            text('li', `${driverName(pair.driver_id)} · ${pairWords(pair)} ${clockTime(pair.at)}`, {
              'data-pair': pair.id,
              'data-state': pair.state,
              class: `state state-${pair.state}`,
            }),
          )
        : [text('li', 'No offers yet.', { class: 'muted' })],
    );
    renderActions(listed);
  }

  const MAY_ACT = ['OrgAdmin', 'OrgTransporter', 'Merchant', 'SysAdmin'];
  function renderActions(r) {
    const actions = [];
    if (roles().some((role) => MAY_ACT.includes(role))) {
      if (['unassigned', 'offered', 'open'].includes(r.status)) actions.push(['assign', 'Assign to a driver…']);
      if (['unassigned', 'offered'].includes(r.status)) actions.push(['reoffer', 'Offer again now']);
      if (['open', 'offered', 'unassigned', 'assigned'].includes(r.status)) actions.push(['cancel', 'Cancel…']);
    }
    keepingFocus(() =>
      show(
        $('detail-actions'),
        actions.map(([action, label]) => {
          const b = button(label, { 'data-action': action, 'data-focus-key': `act:${action}` });
          b.addEventListener('click', () => act(action));
          return b;
        }),
      ),
    );
    if (!actions.some(([a]) => a === 'assign')) $('assign-choices').hidden = true;
    if (!actions.some(([a]) => a === 'cancel')) $('cancel-form').hidden = true;
  }

  /** Great-circle distance in metres. */
  function distance(a, b) {
    const rad = Math.PI / 180;
    const dLat = (b.latitude - a.latitude) * rad;
    const dLon = (b.longitude - a.longitude) * rad;
    const h =
      Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
    return 2 * 6_371_000 * Math.asin(Math.sqrt(h));
  }
  const km = (metres) => (metres < 1000 ? `${Math.round(metres)} m` : `${(metres / 1000).toFixed(1)} km`);

  /**
   * The drivers the dispatcher may give the runsheet to, nearest to its first pickup first: drivers of the planning,
   * on duty, with a fresh position, below their runsheet limit, of its service type (the rules of 4.7, but for the
   * "offered before": a dispatcher may pick someone who declined). Also what the others were left out for.
   */
  function assignChoices(planningId, runsheet) {
    const planning = plannings.get(planningId);
    const { maxAge, perDriver } = parametersOf(planning);
    const first = (runsheet.tasks || []).map((t) => t.from_address || t.to_address).find((a) => a?.latitude != null);
    const held = new Map();
    for (const r of planning.runsheets.values())
      if (['assigned', 'in_progress', 'completed'].includes(r.status) && r.assigned_driver)
        held.set(r.assigned_driver.id, (held.get(r.assigned_driver.id) || 0) + 1);
    const out = { off_duty: 0, no_location: 0, location_stale: 0, at_capacity: 0, service_type: 0 };
    const eligible = [];
    for (const id of planning.driverIds) {
      const driver = drivers.get(id) || { id };
      if (driver.on_duty === false) out.off_duty++;
      else if (first && !driver.location) out.no_location++;
      else if (first && ageOf(driver) > maxAge) out.location_stale++;
      else if ((held.get(id) || 0) >= perDriver) out.at_capacity++;
      else if (
        runsheet.service_type &&
        driver.service_types?.length &&
        !driver.service_types.includes(runsheet.service_type)
      )
        out.service_type++;
      else eligible.push({ driver, metres: first && driver.location ? distance(first, driver.location) : null });
    }
    eligible.sort(
      (a, b) =>
        (a.metres ?? Infinity) - (b.metres ?? Infinity) ||
        naturally.compare(driverName(a.driver.id), driverName(b.driver.id)),
    );
    return { eligible, out };
  }

  async function act(action) {
    if (!selected) return;
    const { planningId, runsheetId } = selected;
    const runsheet = selected.detail || plannings.get(planningId)?.runsheets.get(runsheetId);
    const name = runsheet?.name || runsheetId;
    if (action === 'assign') {
      // The planning's drivers as they are now (P7 may have added some since it was read).
      const planning = plannings.get(planningId);
      if (planning) {
        planning.loaded = false;
        await loadPlanning(planningId).catch(() => {});
      }
      if (selected?.planningId !== planningId || selected?.runsheetId !== runsheetId) return;
      const { eligible, out } = assignChoices(planningId, selected.detail || runsheet);
      const box = $('assign-choices');
      const left = Object.entries(out)
        .filter(([, n]) => n)
        .map(([why, n]) => `${n} ${why.replace('_', ' ')}`);
      box.replaceChildren(
        text('p', eligible.length ? 'Nearest to the first pickup:' : 'No driver of this planning can take it now.', {
          class: 'muted',
        }),
        ...eligible.slice(0, 8).map(({ driver, metres }) => {
          const choice = button(`${driverName(driver.id)}${metres == null ? '' : ` · ${km(metres)}`}`, {
            'data-driver': driver.id,
            class: 'choice',
          });
          choice.addEventListener('click', () => assign(planningId, runsheetId, name, driver.id));
          return choice;
        }),
        ...(left.length ? [text('p', `Left out: ${left.join(', ')}.`, { class: 'muted' })] : []),
      );
      box.hidden = false;
      $('cancel-form').hidden = true;
      box.querySelector('button')?.focus();
      return;
    }
    if (action === 'cancel') {
      $('cancel-form').hidden = false;
      $('assign-choices').hidden = true;
      $('cancel-reason').focus();
      return;
    }
    if (action === 'reoffer') {
      await perform(planningId, runsheetId, 'reoffer', {}, (r) =>
        r.status === 'offered'
          ? `${name} offered again: wave ${r.wave}, ${r.offers_open} driver${r.offers_open === 1 ? '' : 's'}.`
          : `${name}: ${statusSentence(r, planningId)}.`,
      );
    }
  }

  async function assign(planningId, runsheetId, name, driverId) {
    await perform(
      planningId,
      runsheetId,
      'assign',
      { driver_id: driverId },
      () => `${name} assigned to ${driverName(driverId)}.`,
    );
  }

  document.querySelector('[data-action="confirm-cancel"]').addEventListener('click', async () => {
    if (!selected) return;
    const reason = $('cancel-reason').value.trim();
    if (!reason) {
      $('action-result').textContent = 'Say why it is cancelled: the reason is kept with the runsheet.';
      $('cancel-reason').focus();
      return;
    }
    const { planningId, runsheetId } = selected;
    const name = selected.detail?.name || runsheetId;
    await perform(planningId, runsheetId, 'cancel', { reason }, () => `${name} cancelled.`);
  });

  /** One of X16–X18: the answer said in words, or the refusal's `detail`; the planning read again either way. */
  let acting = false;
  async function perform(planningId, runsheetId, action, body, said) {
    if (acting) return; // one action at a time: a double click sends it once
    acting = true;
    const result = $('action-result');
    const buttons = [...document.querySelectorAll('#detail button, #detail input')];
    for (const b of buttons) b.disabled = true;
    result.textContent = 'Working…';
    result.dataset.outcome = 'pending';
    // The answer is said where it was asked: not in another runsheet's detail opened meanwhile.
    const still = () => selected?.planningId === planningId && selected?.runsheetId === runsheetId;
    try {
      const answer = await api(`/v1/plannings/${enc(planningId)}/runsheets/${enc(runsheetId)}/${action}`, {
        method: 'POST',
        body: JSON.stringify(body),
      });
      if (!still()) return;
      result.textContent = said(answer.runsheet || answer);
      result.dataset.outcome = 'done';
      $('assign-choices').hidden = true;
      $('cancel-form').hidden = true;
      $('cancel-reason').value = '';
    } catch (error) {
      if (!still()) return;
      result.textContent = `Refused: ${error.message}`;
      result.dataset.outcome = 'refused';
    } finally {
      acting = false;
      for (const b of buttons) b.disabled = false;
    }
    await loadPlanning(planningId).catch(() => {});
    renderAll();
    $('detail-title').focus();
  }

  function notify(what, about, when) {
    const item = text('li', '');
    item.append(
      text('time', `${new Date(when).toLocaleTimeString()} `),
      text('span', what + (about ? ` · ${about}` : '')),
    );
    $('notifications').prepend(item);
    while ($('notifications').children.length > 30) $('notifications').lastChild.remove();
  }
})();
