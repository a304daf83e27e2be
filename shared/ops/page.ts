/**
 * `GET /ops`: the dispatcher's console (API.md 5; what each part shows: docs/live-operations.md). One static HTML
 * page, one script file and one style sheet (`/ops/assets/app.js`, bundled from the TypeScript of lib/ops/console/ by
 * lib/ops/build.ts; `app.css` here): it signs
 * in with A1 (or a pasted token) and shows what needs a person (unassigned runsheets, offers about to expire, failed
 * tasks, stale drivers on a runsheet), the runsheets grouped by status with the dispatcher's actions (X16–X18), the
 * drivers with their state on a Leaflet map (the library is served by the service at `/ops/assets/` too), and the
 * latest events, kept live from `planning.<id>` and `org.<id>`. Without the map library the positions show on a
 * plain grid. A SysAdmin names the organisation to watch with `?org=<id>` and also sees freelance drivers
 * (`drivers.freelance`).
 *
 * Served with a Content-Security-Policy that allows script and style from the service's own origin only (nothing
 * inline), images from it, `data:` and the configured tile server, and no framing (docs/live-operations.md). The map
 * tiles come from the deployment's configuration only (`OPS_TILE_URL`; the CDK context `opsTileUrl`): no query
 * parameter chooses them, so a link cannot send the organisation's map views to a server of its choosing.
 */
import { readFile } from 'node:fs/promises';
import { keepaliveIntervalMs, WEBSOCKET_IDLE_TIMEOUT_S } from '#shared/notifications/keepalive';

export const DEFAULT_TILE_URL = 'https://tile.openstreetmap.org/{z}/{x}/{y}.png';

/**
 * The files served at `/ops/assets/<name>`: their type, and where each comes from, relative to the project's root
 * (the local host reads them there; the cloud function's bundle carries a copy of each in `ops-assets/`, see the
 * realtime stack). `app.js` is made, not kept: lib/ops/build.ts bundles the console there when the local host starts
 * and when CDK bundles the function.
 */
export const OPS_ASSETS = {
  'app.js': { type: 'text/javascript; charset=utf-8', source: '.build/ops-console/app.js' },
  'app.css': { type: 'text/css; charset=utf-8', source: 'shared/ops/app.css' },
  // Named by the page's <link rel="icon">, so that no browser asks for /favicon.ico (a 404 on every load).
  'favicon.svg': { type: 'image/svg+xml', source: 'shared/ops/favicon.svg' },
  // The recipients' tracking page (shared/tracking/page.ts): its script, bundled with the console's, and its styles.
  'track.js': { type: 'text/javascript; charset=utf-8', source: '.build/ops-console/track.js' },
  'track.css': { type: 'text/css; charset=utf-8', source: 'shared/tracking/track.css' },
  'leaflet.js': { type: 'text/javascript; charset=utf-8', source: 'node_modules/leaflet/dist/leaflet.js' },
  'leaflet.css': { type: 'text/css; charset=utf-8', source: 'node_modules/leaflet/dist/leaflet.css' },
} as const;
export type OpsAssetName = keyof typeof OPS_ASSETS;

export interface OpsConfig {
  /** The tile URL template, or `none`: no tiles (the markers still show). */
  tiles: string;
  /** Where the WebSocket API is; empty: the page's own host at `/ws` (the local host). */
  websocketUrl: string;
  /** The Content-Security-Policy that goes with these: the tile server's and the WebSocket API's origins. */
  contentSecurityPolicy: string;
  /**
   * How often the page sends the keepalive frame on its WebSocket: a third of the gateway's idle limit (API
   * Gateway's; the local host passes its own, shorter when `LOCAL_WEBSOCKET_IDLE_MS` sets one).
   */
  keepaliveMs: number;
}

/**
 * The page's configuration, from the deployment's environment only (`OPS_TILE_URL`, `OPS_WEBSOCKET_URL`). A value
 * that is not a usable URL fails here, loudly: the cloud function reads it at cold start, the local host at start.
 */
export function opsConfig(
  env: Record<string, string | undefined> = process.env,
  idleLimitMs = WEBSOCKET_IDLE_TIMEOUT_S * 1000,
): OpsConfig {
  const tiles = env['OPS_TILE_URL']?.trim() || DEFAULT_TILE_URL;
  const websocketUrl = env['OPS_WEBSOCKET_URL']?.trim() ?? '';
  const tileSource = tiles === 'none' ? [] : [tileOrigin(tiles)];
  const socketSource = websocketUrl ? [originOf(websocketUrl, ['wss:', 'ws:'], 'OPS_WEBSOCKET_URL')] : [];
  const contentSecurityPolicy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    ['img-src', "'self'", 'data:', ...tileSource].join(' '),
    ['connect-src', "'self'", ...socketSource].join(' '),
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  const keepaliveMs = keepaliveIntervalMs(idleLimitMs);
  return { tiles, websocketUrl, contentSecurityPolicy, keepaliveMs };
}

/** The CSP source of a tile template's server; a `{s}` subdomain (Leaflet's a, b, c) becomes a wildcard. */
function tileOrigin(template: string): string {
  if (!['{z}', '{x}', '{y}'].every((part) => template.includes(part))) {
    throw new Error(`OPS_TILE_URL ${template} is not a tile URL template with {z}, {x} and {y} (or 'none').`);
  }
  const subdomains = /^https?:\/\/\{s\}\./.test(template);
  const origin = originOf(template.replace('{s}.', 'a.'), ['https:', 'http:'], 'OPS_TILE_URL');
  return subdomains ? origin.replace('//a.', '//*.') : origin;
}

function originOf(value: string, protocols: string[], name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} ${value} is not a URL.`);
  }
  if (!protocols.includes(url.protocol) || /[{}]/.test(url.host) || url.username || url.password) {
    throw new Error(`${name} ${value} must be a ${protocols.join(' or ')} URL with a plain host.`);
  }
  return `${url.protocol}//${url.host}`;
}

/**
 * A served asset's bytes; `locate` says where the named file is (the project's file locally, the bundle's copy in
 * the cloud). Undefined for a name the page does not serve.
 */
export async function opsAsset(
  name: string,
  locate: (asset: { name: OpsAssetName; source: string }) => string,
): Promise<{ type: string; body: Buffer } | undefined> {
  if (!Object.hasOwn(OPS_ASSETS, name)) return undefined;
  const asset = OPS_ASSETS[name as OpsAssetName];
  const body = await readFile(locate({ name: name as OpsAssetName, source: asset.source })).catch(() => undefined);
  return body ? { type: asset.type, body } : undefined;
}

/** What every answer of the page's family carries: the page's own, and its assets' (cached, not sniffed). */
const COMMON_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };
export const OPS_ASSET_HEADERS = { ...COMMON_HEADERS, 'Cache-Control': 'public, max-age=3600' };

export function opsPageHeaders(config: OpsConfig): Record<string, string> {
  return {
    ...COMMON_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Security-Policy': config.contentSecurityPolicy,
    'X-Frame-Options': 'DENY',
  };
}

/** `<` inside the JSON would end the element; the block is data (`application/json`), never run. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

export function opsPage(config: OpsConfig): string {
  const { tiles, websocketUrl, keepaliveMs } = config;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dispatch console</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/ops/assets/leaflet.css">
<link rel="stylesheet" href="/ops/assets/app.css">
<link rel="icon" type="image/svg+xml" href="/ops/assets/favicon.svg">
</head>
<body>
<header><h1>Dispatch console</h1>
  <a id="attention-link" href="#attention" hidden>Needs attention <span id="attention-count" class="badge">0</span></a>
  <span id="status" role="status">signed out</span>
  <button id="signout" type="button" hidden>Sign out</button></header>
<form id="signin">
  <h2>Sign in</h2>
  <p class="hint" id="signin-hint">A dispatcher signs in as an OrgAdmin or OrgTransporter of the organisation (a
  Merchant sees its own). No login yet? Your organisation's admin invites you; locally, <code>npm run demo</code>
  prints one.</p>
  <input id="email" type="email" placeholder="email" autocomplete="username" aria-label="email">
  <input id="password" type="password" placeholder="password" autocomplete="current-password" aria-label="password">
  <div class="or">or paste a bearer token</div>
  <textarea id="token" rows="3" placeholder="eyJ…" aria-label="bearer token"></textarea>
  <button type="submit">Sign in</button>
  <div id="error" role="alert"></div>
  <div id="org-pick" hidden><label>Which organisation? <select id="org-choice"></select></label>
    <button type="button" id="org-go">Watch it</button></div>
</form>
<main id="app" hidden>
  <section class="col work" aria-label="runsheets">
    <div class="panel" id="attention"><h2>Needs attention</h2>
      <ul id="attention-list"></ul><p class="empty" id="attention-empty">Nothing needs a person now.</p></div>
    <details class="panel" id="planner"><summary><h2>Route planning</h2></summary>
      <label class="filter">Planning <select id="planner-planning"></select></label>
      <fieldset><legend>Tasks</legend>
        <label><input type="radio" name="planner-source" value="import" checked> the unplanned tasks of the import
          <select id="planner-import" aria-label="import job"></select></label>
        <label><input type="radio" name="planner-source" value="unplanned"> every unplanned task</label>
      </fieldset>
      <fieldset><legend>Fleet: the planning's drivers, one vehicle each at their last position</legend>
        <div class="shift"><label>Shift from <input type="datetime-local" id="planner-shift-start"></label>
          <label>to <input type="datetime-local" id="planner-shift-end"></label>
          <label>Search for <input type="number" id="planner-time" min="1" max="60" value="5"> s</label></div>
        <ul id="planner-vehicles" class="plain"></ul>
      </fieldset>
      <div class="actions"><button type="button" id="planner-build">Build a dry run</button>
        <button type="button" id="planner-insert">Fit the unplanned tasks into the live routes</button></div>
      <p id="planner-status" role="status"></p>
      <div id="planner-review" hidden aria-label="the dry run under review">
        <p id="planner-summary" tabindex="-1"></p>
        <table><thead><tr><th>runsheet</th><th>driver</th><th>stops</th><th>km</th><th>hours</th><th>when</th></tr></thead>
        <tbody id="planner-routes"></tbody></table>
        <h3>Left out</h3><ul id="planner-left-out"></ul>
        <div class="actions"><button type="button" id="planner-apply">Apply this plan</button>
          <button type="button" id="planner-discard">Discard</button></div>
      </div>
      <h3>Unplanned tasks (<span id="planner-unplanned-count">0</span>)
        <button type="button" id="planner-refresh" class="link">read again</button></h3>
      <ul id="planner-unplanned"></ul><p class="empty" id="planner-unplanned-empty">No task waits for a route.</p>
    </details>
    <div class="panel" id="runsheets"><h2>Runsheets</h2>
      <label class="filter">Planning <select id="planning-filter"><option value="">All plannings</option></select></label>
      <div id="board"><p class="empty">No runsheets yet.</p></div></div>
  </section>
  <section class="col centre">
    <div id="map" role="region" aria-label="map of drivers and the selected runsheet's stops"></div>
    <div class="panel" id="detail" hidden aria-label="the selected runsheet">
      <div class="detail-head"><h2 id="detail-title" tabindex="-1"></h2>
        <button type="button" id="detail-close" aria-label="close the runsheet">×</button></div>
      <p id="detail-status"></p>
      <p><span class="muted">Driver:</span> <span id="detail-driver"></span>
        <span class="muted" id="detail-planning"></span></p>
      <div id="detail-actions" class="actions"></div>
      <div id="assign-choices" hidden></div>
      <div id="cancel-form" hidden><label>Reason <input id="cancel-reason" maxlength="500"></label>
        <button type="button" class="cancel-button" data-action="confirm-cancel">Cancel the runsheet</button></div>
      <p id="action-result" role="status"></p>
      <h3 id="detail-stops-head" hidden>Stops</h3><ol id="detail-stops" class="stops"></ol>
      <h3>Tasks</h3><ol id="detail-tasks"></ol>
      <h3>Offers</h3><ul id="detail-offers"></ul>
    </div>
  </section>
  <section class="col side">
    <div class="panel" id="drivers-panel"><h2>Drivers (<span id="driver-count">0</span>)</h2>
      <table><thead><tr><th>driver</th><th>state</th><th>last seen</th></tr></thead>
      <tbody id="drivers"></tbody></table></div>
    <div class="panel"><h2>Latest events</h2><ul id="notifications"></ul></div>
  </section>
</main>
<script id="config" type="application/json">${scriptJson({ tiles, websocketUrl, keepaliveMs })}</script>
<script src="/ops/assets/leaflet.js"></script>
<script src="/ops/assets/app.js"></script>
</body></html>`;
}
