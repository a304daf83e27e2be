/**
 * The /ops page's script (shared/ops/page.ts serves it at /ops/assets/app.js; the page's CSP allows no inline
 * script). Everything a user typed (names, runsheet and planning names, event names) reaches the DOM as text:
 * `textContent` and elements built here, never `innerHTML`; Leaflet's tooltips get such an element, never a string
 * (a string is HTML to Leaflet).
 */
(() => {
  const config = JSON.parse(document.getElementById('config').textContent);
  const $ = (id) => document.getElementById(id);
  const text = (tag, value, attrs = {}) => {
    const el = document.createElement(tag);
    el.textContent = value == null ? '' : String(value);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    return el;
  };
  let token = null,
    refreshToken = null,
    claims = null,
    socket = null,
    map = null;
  let renewTimer = null,
    planningTimer = null,
    keepaliveTimer = null,
    signedIn = false,
    renewals = 0,
    connections = 0;
  const drivers = new Map(),
    markers = new Map(),
    labels = new Map(),
    plannings = new Map(),
    subscribed = new Set(),
    names = new Map();
  // The roles that may watch an organisation; a driver or a partner is told so at sign-in.
  const WATCHERS = ['SysAdmin', 'OrgAdmin', 'OrgTransporter', 'Merchant'];
  const shortId = (id) => (id || '').slice(0, 8);
  const driverName = (id) => names.get(id) || shortId(id);

  // A SysAdmin (no organisation of their own) names the one to watch with ?org=<id>.
  const orgId = () => claims.org_id || new URLSearchParams(location.search).get('org');
  const decode = (jwt) => JSON.parse(atob(jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
  async function api(path, init = {}) {
    const response = await fetch(path, {
      ...init,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok)
      throw Object.assign(new Error(body.detail || body.title || `HTTP ${response.status}`), {
        status: response.status,
      });
    return body;
  }

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
      const roles = claims.roles || [];
      if (!roles.some((r) => WATCHERS.includes(r))) {
        throw new Error(
          'this page is for dispatchers (OrgAdmin, OrgTransporter, Merchant or SysAdmin); this account is ' +
            (roles.join(', ') || 'without a role'),
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

  async function start() {
    signedIn = true;
    $('signin').hidden = true;
    $('app').hidden = false;
    $('signout').hidden = false;
    $('status').textContent = `${orgId() ? `organisation ${orgId()}` : 'no organisation'} · connecting…`;
    setUpMap();
    scheduleRenewal();
    connect();
    await Promise.all([loadDrivers(), loadPlannings(), loadNotifications()]);
    planningTimer = setInterval(() => loadPlannings().catch(() => {}), 5000);
  }

  /** Back to the sign-in form, with the message where the user looks; nothing of the session is kept. */
  function signOut(message) {
    signedIn = false;
    clearTimeout(renewTimer);
    clearInterval(planningTimer);
    clearInterval(keepaliveTimer);
    if (socket) {
      socket.onclose = null;
      socket.close();
      socket = null;
    }
    token = refreshToken = claims = null;
    drivers.clear();
    markers.clear();
    labels.clear();
    plannings.clear();
    subscribed.clear();
    if (map) {
      map.remove();
      map = null;
    }
    $('map').replaceChildren();
    $('drivers').replaceChildren();
    $('driver-count').textContent = '0';
    $('plannings').textContent = 'none yet';
    $('notifications').replaceChildren();
    $('app').hidden = true;
    $('signout').hidden = true;
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

  async function renew() {
    const expiredAt = new Date(claims.exp * 1000).toLocaleTimeString();
    if (!refreshToken) return signOut(`Your session expired at ${expiredAt}: sign in again.`);
    try {
      const next = await api('/v1/auth/refresh', {
        method: 'POST',
        body: JSON.stringify({ refresh_token: refreshToken }),
      });
      token = next.bearer_token;
      refreshToken = next.refresh_token;
      claims = decode(token);
      renewals += 1;
      document.body.dataset.renewals = String(renewals);
      scheduleRenewal();
      // The connection was opened with the old token: open a new one with the new token and subscribe again.
      if (socket) socket.close();
    } catch (error) {
      if (error.status === undefined && claims.exp * 1000 > Date.now() + 5000) {
        renewTimer = setTimeout(renew, 5000); // the network, not the session: try again shortly
        return;
      }
      signOut(`Your session ended (${error.message}): sign in again.`);
    }
  }

  function setUpMap() {
    if (!window.L) return; // no map library: the plain grid below places the dots
    map = L.map('map', { zoomControl: true }).setView([1.3, 103.8], 11);
    if (config.tiles && config.tiles !== 'none') {
      L.tileLayer(config.tiles, { maxZoom: 19, attribution: '&copy; OpenStreetMap contributors' }).addTo(map);
    }
  }

  function connect() {
    const base = config.websocketUrl || `${(location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host}/ws`;
    const opened = new WebSocket(`${base}?token=${encodeURIComponent(token)}`);
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
      if ((claims.roles || []).includes('SysAdmin')) channels.push('drivers.freelance');
      for (const id of plannings.keys()) channels.push(`planning.${id}`);
      subscribe(channels);
    };
    socket.onmessage = (message) => onFrame(JSON.parse(message.data));
    // Closed by the gateway (idle, or its 2-hour limit), by a renewal, or by the network: connect again and subscribe
    // again after a second.
    socket.onclose = (event) => {
      if (socket === opened) clearInterval(keepaliveTimer);
      document.body.dataset.closed = String(event.code);
      if (!signedIn) return;
      if (claims.exp * 1000 <= Date.now()) return renew();
      $('status').textContent = 'disconnected · reconnecting…';
      setTimeout(() => {
        if (signedIn) connect();
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
    if (frame.type === 'error' && frame.code !== 'forbidden') {
      // The connection's token expired or was revoked: renew and reconnect, or return to sign-in.
      if (frame.code === 'token_expired' || frame.code === 'token_revoked') renew();
      return;
    }
    if (frame.type !== 'event') return;
    if (frame.name === 'driver.location') {
      for (const driver of frame.data.drivers) moveDriver(driver);
      return;
    }
    if (frame.name.startsWith('pair.') && frame.channel.startsWith('planning.')) {
      const planning = plannings.get(frame.channel.slice('planning.'.length));
      if (planning) {
        const state =
          frame.data.current_state || (frame.name === 'pair.broadcast' ? 'broadcasted' : frame.name.slice(5));
        planning.pairs.set(frame.data.pair_id, {
          ...(planning.pairs.get(frame.data.pair_id) || {}),
          id: frame.data.pair_id,
          runsheet_id: frame.data.runsheet_id,
          driver_id: frame.data.driver_id,
          state,
        });
        renderPlannings();
      }
    }
    if (frame.name === 'planning_job.status') loadPairs(frame.channel.slice('planning.'.length)).catch(() => {});
    notify(frame.name, frame.channel, new Date().toISOString());
  }

  function moveDriver(driver) {
    const known = drivers.get(driver.user_id);
    if (known && known.version >= driver.version) return;
    drivers.set(driver.user_id, driver);
    if (map) {
      const marker = markers.get(driver.user_id);
      if (marker) marker.setLatLng([driver.latitude, driver.longitude]);
      else {
        const label = text('span', driverName(driver.user_id), { 'data-label': driver.user_id });
        labels.set(driver.user_id, label);
        markers.set(
          driver.user_id,
          L.circleMarker([driver.latitude, driver.longitude], { radius: 7, color: '#e63946', fillOpacity: 0.8 })
            .bindTooltip(label)
            .addTo(map),
        );
        fitMap();
      }
    }
    renderDrivers();
  }

  /** Every driver in view (a driver newly heard of widens it). */
  function fitMap() {
    if (!map || markers.size === 0) return;
    const bounds = L.latLngBounds([...markers.values()].map((m) => m.getLatLng()));
    if (markers.size === 1) map.setView(bounds.getCenter(), 13);
    else map.fitBounds(bounds.pad(0.15), { maxZoom: 15 });
    document.body.dataset.fitted = String(markers.size);
  }

  /**
   * The drivers already located before sign-in, with their names: the organisation's drivers (A19 for its admin,
   * A15 for SysAdmin with ?org=), then each one's last position (L2, a few at a time). Other roles see drivers as
   * they move.
   */
  async function loadDrivers() {
    const org = orgId();
    if (!org) return;
    const roles = claims.roles || [];
    const listing = roles.includes('SysAdmin')
      ? (page) => `/v1/admin/users/by-role?role_name=OrgDriver&per_page=100&org_id=${encodeURIComponent(org)}${page}`
      : roles.includes('OrgAdmin')
        ? (page) => `/v1/org/users?per_page=100${page}`
        : null;
    if (!listing) return;
    const ids = [];
    let page = '';
    for (let i = 0; i < 20; i++) {
      const list = await api(listing(page));
      for (const user of list.users) {
        const userRoles = user.roles_name || user.roles || [];
        if (!userRoles.some((r) => r === 'OrgDriver' || r === 'Driver' || /driver/i.test(r))) continue;
        names.set(user.id, user.name || user.email || shortId(user.id));
        ids.push(user.id);
      }
      if (!list.meta?.next_page_token) break;
      page = `&page_token=${encodeURIComponent(list.meta.next_page_token)}`;
    }
    const queue = [...ids];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (queue.length && signedIn) {
          const id = queue.shift();
          const found = await api(`/v1/driver-locations/${encodeURIComponent(id)}`).catch(() => null);
          if (found?.location) moveDriver({ ...found.location, user_id: found.location.user_id || id });
        }
      }),
    );
    renderDrivers();
    renderPlannings();
  }

  function renderDrivers() {
    const rows = [...drivers.values()]
      .sort((a, b) => driverName(a.user_id).localeCompare(driverName(b.user_id)))
      .map((d) => {
        const row = document.createElement('tr');
        row.dataset.driver = d.user_id;
        row.dataset.latitude = d.latitude;
        row.dataset.longitude = d.longitude;
        row.append(
          text('td', driverName(d.user_id), { title: d.user_id }),
          text('td', d.latitude.toFixed(5)),
          text('td', d.longitude.toFixed(5)),
          text('td', new Date(d.server_time).toLocaleTimeString()),
        );
        return row;
      });
    $('drivers').replaceChildren(...rows);
    // A name learnt after the marker was made (A19's list, a pair record) reaches its tooltip, as text.
    for (const [id, label] of labels) label.textContent = driverName(id);
    $('driver-count').textContent = drivers.size;
    if (!map) renderGrid();
  }

  /** Without the map library: the drivers' positions scaled into the map's box. */
  function renderGrid() {
    const all = [...drivers.values()];
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
        const dot = text('div', '', { class: 'grid-dot', title: d.user_id, 'aria-label': driverName(d.user_id) });
        dot.style.left = `${5 + 90 * ((d.longitude - minLon) / (maxLon - minLon || 1))}%`;
        dot.style.top = `${5 + 90 * (1 - (d.latitude - minLat) / (maxLat - minLat || 1))}%`;
        return dot;
      }),
    );
  }

  async function loadPlannings() {
    const org = orgId();
    const scoped = org && (claims.roles || []).includes('SysAdmin') ? `&org_id=${encodeURIComponent(org)}` : '';
    const list = await api(`/v1/plannings?per_page=20${scoped}`);
    for (const p of list.plannings) {
      if (!plannings.has(p.id)) {
        plannings.set(p.id, { ...p, pairs: new Map() });
        await loadPairs(p.id).catch(() => {});
      }
    }
    subscribe([...plannings.keys()].map((id) => `planning.${id}`));
    renderPlannings();
  }

  async function loadPairs(planningId) {
    const planning = plannings.get(planningId);
    if (!planning) return;
    const records = [];
    // R2 pages (1 000 records a page): a day's planning is a few pages at most.
    for (let token = '', pages = 0; pages < 20; pages++) {
      const list = await api(`/v1/broadcast-plans/${encodeURIComponent(planningId)}/pairs${token}`);
      records.push(...list.pair_records);
      if (!list.meta?.next_page_token) break;
      token = `?page_token=${encodeURIComponent(list.meta.next_page_token)}`;
    }
    for (const r of records) {
      if (r.pair.driver.name) names.set(r.pair.driver.id, r.pair.driver.name);
      planning.pairs.set(r.id, {
        id: r.id,
        runsheet_id: r.pair.runsheet.id,
        runsheet_name: r.pair.runsheet.name,
        driver_id: r.pair.driver.id,
        state: r.current_state,
      });
    }
    renderPlannings();
  }

  function renderPlannings() {
    if (plannings.size === 0) return;
    $('plannings').replaceChildren(
      ...[...plannings.values()].map((p) => {
        const section = text('div', '', { 'data-planning': p.id });
        section.append(
          text('strong', p.name),
          text('span', ` · ${p.total_runsheets} runsheets, ${p.total_drivers} drivers`),
        );
        const table = document.createElement('table');
        for (const pair of [...p.pairs.values()].sort((a, b) =>
          (a.runsheet_id + a.driver_id).localeCompare(b.runsheet_id + b.driver_id),
        )) {
          const row = document.createElement('tr');
          row.dataset.pair = pair.id;
          row.dataset.state = pair.state;
          row.append(
            text('td', pair.runsheet_name || pair.runsheet_id, { title: pair.runsheet_id }),
            text('td', driverName(pair.driver_id), { title: pair.driver_id || '' }),
            text('td', pair.state, { class: `state state-${pair.state}` }),
          );
          table.append(row);
        }
        section.append(table);
        return section;
      }),
    );
  }

  async function loadNotifications() {
    try {
      const list = await api('/v1/notifications?limit=10');
      for (const n of list.notifications.reverse())
        notify(n.event_type || n.type || 'notification', '', n.created_at || n.server_time);
    } catch (error) {
      if (error.status === 403)
        notify('The notification log is not open to your role; live events show here.', '', new Date().toISOString());
    }
  }

  function notify(what, channel, when) {
    const item = text('li', '');
    item.append(
      text('time', `${new Date(when).toLocaleTimeString()} `),
      text('span', what + (channel ? ` · ${channel}` : '')),
    );
    $('notifications').prepend(item);
    while ($('notifications').children.length > 30) $('notifications').lastChild.remove();
  }
})();
