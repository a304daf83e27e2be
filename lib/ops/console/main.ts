/**
 * The dispatcher's console (`/ops`, contract section 5; shared/ops/page.ts serves the page and this bundle at
 * /ops/assets/app.js, lib/ops/build.ts makes it; the page's CSP allows no inline script). Runsheets first, grouped by
 * what needs a person (X14's statuses, 4.7); drivers with their state (A19/A15 duty, L2 positions, the offers of R2
 * and the runsheets they hold); the actions X16, X17 and X18 where they apply; an attention list, kept live from
 * `planning.<id>` and `org.<id>` (docs/live-operations.md).
 *
 * Everything a user typed (names, runsheet and planning names, addresses, notes, event names) reaches the DOM as text:
 * `textContent` and elements built here, never `innerHTML`; Leaflet's tooltips get such an element, never a string
 * (a string is HTML to Leaflet).
 *
 * The parts, each importing only those before it: dom, state, timeliness, api, derive, map, drivers, notifications,
 * board, load, planner, actions, detail, render, connection; this file wires the page's controls and the `screen` the parts ask.
 */
import { confirmCancel } from './actions.ts';
import { signIn, signOutAndEnd, watchChosen } from './connection.ts';
import { closeAndRefocus, closeDetail, loadSelected, select } from './detail.ts';
import { $ } from './dom.ts';
import { plannerChanged, setUpPlanner } from './planner.ts';
import { renderAll, renderSoon } from './render.ts';
import { screen } from './state.ts';

Object.assign(screen, { renderAll, renderSoon, loadSelected, closeDetail, select, plannerChanged });
setUpPlanner();

$<HTMLFormElement>('signin').addEventListener('submit', signIn);
$('signout').addEventListener('click', signOutAndEnd);
$('org-go').addEventListener('click', watchChosen);
$('planning-filter').addEventListener('change', () => renderAll());
$('detail-close').addEventListener('click', closeAndRefocus);
document.querySelector('[data-action="confirm-cancel"]')?.addEventListener('click', confirmCancel);
