/**
 * `GET /track/{token}`: the recipient's page of a tracking link (contract 4.11). One static HTML page, the same for
 * every token, whose one script (`/ops/assets/track.js`, bundled from lib/ops/console/track.ts) reads the token from
 * the address, asks X29 for what it may show and asks again every 30 seconds (polling: the simplest live refresh, and
 * a recipient opens it for minutes, not hours). Everything shown is put in with `textContent`, so a `task_ref` or
 * organisation name that holds markup is shown as text. Served with the console's Content-Security-Policy and headers
 * (shared/ops/page.ts), by the local host and, in the cloud, by the `/ops` function; laid out for a 390-px phone.
 */
import { type OpsConfig, opsPageHeaders } from '#shared/ops/page';

/** How often the page asks X29 again (the script reads it from the page, so the tests may shorten it). */
export const TRACKING_REFRESH_MS = 30_000;

export const trackingPageHeaders = (config: OpsConfig): Record<string, string> => ({
  ...opsPageHeaders(config),
  // The token is in the path: no page it links to learns it.
  'Referrer-Policy': 'no-referrer',
});

export function trackingPage(refreshMs = TRACKING_REFRESH_MS): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Your delivery</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="stylesheet" href="/ops/assets/track.css">
<link rel="icon" type="image/svg+xml" href="/ops/assets/favicon.svg">
</head>
<body data-refresh-ms="${Number(refreshMs)}">
<main class="track">
  <p class="org" id="org"></p>
  <h1>Delivery <span id="ref"></span></h1>
  <p class="status" id="status" role="status">Loading…</p>
  <dl id="facts" hidden>
    <dt>Expected</dt><dd id="eta"></dd>
    <dt>Delivery window</dt><dd id="window"></dd>
    <dt>Driver</dt><dd id="driver"></dd>
    <dt>Where the driver is</dt><dd id="position"></dd>
    <dt>To</dt><dd id="city"></dd>
  </dl>
  <p class="muted" id="updated"></p>
</main>
<script src="/ops/assets/track.js"></script>
</body></html>`;
}
