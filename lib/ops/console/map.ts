/**
 * The map: the drivers as markers coloured by their state, each labelled with their name (an element, as text: a
 * string is HTML to Leaflet), and the selected runsheet's stops, each labelled with its number in the detail's stop
 * list (its words on its marker, as an SVG title), the labels laid out apart and inside the map (`layoutLabels`).
 * Without the map library, the drivers' positions on a plain grid.
 */

import { type DriverState, isStale, stateOf } from './derive.ts';
import { $, clockTime, config, text } from './dom.ts';
import { type CircleMarker, type LatLng, type LayerGroup, type LeafletMap, leaflet } from './leaflet.ts';
import { driverName, drivers, view } from './state.ts';
import { PROGRESS_WORDS, type StopView } from './timeliness.ts';

export const STATE_COLOURS: Record<DriverState, string> = {
  available: '#2a9d8f',
  offered: '#e9a100',
  on_runsheet: '#1d5fbf',
  off_duty: '#8a8f98',
};

let map: LeafletMap | null = null;
let driverLayer: LayerGroup | null = null;
let stopLayer: LayerGroup | null = null;
/** The selected built runsheet's route, apart from its stops (fitMap reads the stops' positions). */
let routeLayer: LayerGroup | null = null;
/** The planner's reviewed plan (its routes, each a colour), apart from the selected runsheet's stops. */
let planLayer: LayerGroup | null = null;
/** The points of the plan drawn (the map is fitted to them while no runsheet is selected). */
let planPoints: LatLng[] = [];
const STOP_COLOURS = { pickup: '#6a4c93', dropoff: '#c1121f' } as const;
const markers = new Map<string, CircleMarker>();
const labels = new Map<string, HTMLElement>();
/** The selected runsheet's stop labels by stop (`task:kind`), in the stop list's order. */
const stopLabels = new Map<string, HTMLElement>();
/** While the drivers are first read: the map is fitted once at the end, not for each marker. */
export const fitting = { bulk: false };

export const hasMap = () => map != null;

export function setUpMap(): void {
  const L = leaflet();
  if (!L) return; // no map library: the plain grid below places the dots
  // On a phone one finger scrolls the page, not the map (two pan and zoom it).
  map = L.map('map', { zoomControl: true, dragging: !L.Browser.mobile }).setView([1.3, 103.8], 11);
  if (config.tiles && config.tiles !== 'none') {
    // Without the tile server (no network): said on the map, over it but not in the markers' way (issue 46.8).
    const notice = text('div', 'map tiles unavailable', { id: 'tiles-notice', role: 'status', hidden: '' });
    $('map').append(notice);
    L.tileLayer(config.tiles, { maxZoom: 19, attribution: '&copy; OpenStreetMap contributors' })
      .on('tileerror', () => {
        notice.hidden = false;
      })
      .on('tileload', () => {
        notice.hidden = true;
      })
      .addTo(map);
  }
  map.on('zoomend moveend', layoutLabels);
  // The window resized (a laptop's window narrowed, a phone turned): the selected runsheet's stops fitted again.
  map.on('resize', () => {
    if (view.selected) fitMap();
  });
  driverLayer = L.layerGroup().addTo(map);
  planLayer = L.layerGroup().addTo(map);
  routeLayer = L.layerGroup().addTo(map);
  stopLayer = L.layerGroup().addTo(map);
}

/** The map and its markers gone (sign-out). */
export function removeMap(): void {
  markers.clear();
  labels.clear();
  stopLabels.clear();
  if (map) {
    map.remove();
    map = driverLayer = stopLayer = routeLayer = planLayer = null;
    planPoints = [];
  }
  $('map').replaceChildren();
}

/** The driver's marker at their new position (made, labelled and the map fitted, for one newly heard of). */
export function placeDriver(id: string, latitude: number, longitude: number): void {
  const L = leaflet();
  if (!map || !L || !driverLayer) return;
  const marker = markers.get(id);
  if (marker) marker.setLatLng([latitude, longitude]);
  else {
    const label = text('span', driverName(id), { 'data-label': id, class: 'driver-label' });
    labels.set(id, label);
    markers.set(
      id,
      L.circleMarker([latitude, longitude], {
        radius: 7,
        color: STATE_COLOURS[stateOf(id).state],
        fillOpacity: 0.85,
        className: 'driver-marker',
      })
        .bindTooltip(label, { permanent: true, direction: 'right', offset: [8, 0], className: 'driver-tip' })
        .addTo(driverLayer),
    );
    const made = markers.get(id);
    made?.getElement()?.setAttribute('data-driver', id);
    // A label hidden for crowding shows while its marker is pointed at.
    made?.on('mouseover', () => label.parentElement?.classList.add('pointed'));
    made?.on('mouseout', () => label.parentElement?.classList.remove('pointed'));
    if (!view.selected && !fitting.bulk) fitMap();
  }
}

/** A name learnt after the marker was made (a list, a pair record) reaches its label, as text; colours by state. */
export function refreshMarkers(): void {
  for (const [id, label] of labels) if (label.textContent !== driverName(id)) label.textContent = driverName(id);
  for (const [id, marker] of markers) {
    const style = { color: STATE_COLOURS[stateOf(id).state], fillOpacity: isStale(drivers.get(id)) ? 0.2 : 0.85 };
    if (marker.options.color === style.color && marker.options.fillOpacity === style.fillOpacity) continue;
    marker.setStyle?.(style);
  }
  if (!map) renderGrid();
  else layoutLabels();
}

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}
const covers = (a: Box, b: Box) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
/** Inside the map's box, a pixel in from its edges. */
const inside = (box: Box, within: Box) =>
  box.left >= within.left + 1 &&
  box.right <= within.right - 1 &&
  box.top >= within.top + 1 &&
  box.bottom <= within.bottom - 1;
const boxAt = (x: number, y: number, width: number, height: number): Box => ({
  left: x - width / 2,
  top: y - height / 2,
  right: x + width / 2,
  bottom: y + height / 2,
});
const widened = (box: Box, by: number): Box => ({
  left: box.left - by,
  top: box.top - by,
  right: box.right + by,
  bottom: box.bottom + by,
});

/** From a stop marker's centre to the nearest edge of its label: clear of the marker's ring (radius 6, weight 3). */
const STOP_LABEL_GAP_PX = 10;
/** How far out a stop's label may go when the places nearer are taken: rings this far apart, this many. */
const RING_STEP_PX = 12;
const RINGS = 7;
/** Right, left, above, below, then the corners: the first of them free takes the label. */
const DIRECTIONS: readonly [number, number][] = [
  [1, 0],
  [-1, 0],
  [0, -1],
  [0, 1],
  [1, -1],
  [1, 1],
  [-1, -1],
  [-1, 1],
];

/**
 * Where a stop's label goes (issue 55 item 8): its centre `(x, y)` is its marker's; the first place around it, ring by
 * ring, that lies inside the map and covers no label placed before it (nor, on the first pass, another stop's
 * marker). None: null.
 */
function placeLabel(
  x: number,
  y: number,
  width: number,
  height: number,
  within: Box,
  taken: readonly Box[],
  markerBoxes: readonly Box[],
): Box | null {
  for (const avoidMarkers of [true, false])
    for (let ring = 0; ring < RINGS; ring++) {
      const gap = STOP_LABEL_GAP_PX + ring * RING_STEP_PX;
      for (const [dx, dy] of DIRECTIONS) {
        const diagonal = dx !== 0 && dy !== 0 ? Math.SQRT1_2 : 1;
        const box = boxAt(x + dx * (gap * diagonal + width / 2), y + dy * (gap * diagonal + height / 2), width, height);
        if (!inside(box, within)) continue;
        const spaced = widened(box, 1);
        if (taken.some((t) => covers(spaced, t))) continue;
        if (avoidMarkers && markerBoxes.some((m) => covers(box, m))) continue;
        return box;
      }
    }
  return null;
}

/**
 * The map's labels laid out in one pass, after each is put back where Leaflet places it (all measured, then all
 * moved). The selected runsheet's stop labels first (issue 55 item 8): each beside its marker where it leaves the map
 * and covers no other label nor the map's controls; one with no such place (a crowd at the widest zoom), or whose
 * marker is out of view, hidden (`crowded`) until its marker is pointed at. Then the drivers' labels (issue 46.7):
 * one that would leave the map at its right goes to the marker's left; one that would cover a label already shown is
 * hidden (`crowded`) until its marker is pointed at or the map is zoomed in far enough to part them. Never while a
 * zoom is under way (its `zoomend` lays them out).
 */
function layoutLabels(): void {
  if (!map) return;
  // Mid-zoom the labels' boxes are between two scales: a layout then would hide or show labels by where they pass,
  // not where they land. Leaflet marks its pane while it animates and ends with zoomend, which lays them out.
  if ($('map').querySelector('.leaflet-zoom-anim')) return;
  const within = $('map').getBoundingClientRect();
  const stopTips = [...stopLabels.values()].flatMap((label) => (label.parentElement ? [label.parentElement] : []));
  const driverTips = [...labels].flatMap(([id, label]) =>
    label.parentElement ? [{ id, tip: label.parentElement }] : [],
  );
  for (const tip of [...stopTips, ...driverTips.map((d) => d.tip)]) {
    tip.classList.remove('crowded');
    tip.style.marginLeft = '';
    tip.style.marginTop = '';
  }
  const stopBoxes = stopTips.map((tip) => tip.getBoundingClientRect());
  const markerBoxes = (stopLayer?.getLayers() || []).flatMap((marker) => {
    const box = marker.getElement()?.getBoundingClientRect();
    return box ? [box] : [];
  });
  const driverBoxes = driverTips.map(({ id, tip }) => ({
    tip,
    box: tip.getBoundingClientRect(),
    marker: markers.get(id)?.getElement()?.getBoundingClientRect(),
  }));
  // The map's own controls (zoom, attribution) are in the way too: no label goes under them.
  const kept: Box[] = [...$('map').querySelectorAll('.leaflet-control')].map((control) =>
    control.getBoundingClientRect(),
  );
  stopTips.forEach((tip, i) => {
    const at = stopBoxes[i];
    if (!at || at.width === 0) return;
    // A stop's tip is centred on its marker (direction 'center'): its centre is the marker's.
    const [x, y] = [at.left + at.width / 2, at.top + at.height / 2];
    const seen = x >= within.left && x <= within.right && y >= within.top && y <= within.bottom;
    // A stop out of view (the map panned) has no label: one at the map's edge would name a place it is not.
    const placed = seen ? placeLabel(x, y, at.width, at.height, within, kept, markerBoxes) : null;
    if (!placed) {
      tip.classList.add('crowded');
      return;
    }
    tip.style.marginLeft = `${placed.left - at.left}px`;
    tip.style.marginTop = `${placed.top - at.top}px`;
    kept.push(placed);
  });
  for (const { tip, box, marker } of driverBoxes) {
    if (box.width === 0) continue;
    let placed: Box = box;
    if (box.right > within.right - 1 && marker) {
      // To the marker's left, as far from it as the right-hand place was.
      const shift = marker.left - (box.left - marker.right) - box.right;
      placed = { left: box.left + shift, right: box.right + shift, top: box.top, bottom: box.bottom };
      tip.style.marginLeft = `${shift}px`;
    }
    if (kept.some((k) => covers(k, placed))) tip.classList.add('crowded');
    else kept.push(placed);
  }
}

/**
 * Every driver in view (a driver newly heard of widens it); with a runsheet selected, its stops and driver. The map's
 * box is measured again first: opening or closing the detail resizes it, and Leaflet would fit to the old size.
 */
export function fitMap(): void {
  const L = leaflet();
  if (!map || !L || !stopLayer) return;
  map.invalidateSize({ pan: false });
  const points: LatLng[] = [];
  const selected = view.selected;
  if (selected && stopLayer.getLayers().length) {
    for (const layer of stopLayer.getLayers()) points.push(layer.getLatLng());
    const driverId = selected.detail?.assigned_driver?.id;
    const marker = driverId ? markers.get(driverId) : undefined;
    if (marker) points.push(marker.getLatLng());
  } else if (planPoints.length) points.push(...planPoints);
  else for (const m of markers.values()) points.push(m.getLatLng());
  if (points.length === 0) return;
  const bounds = L.latLngBounds(points);
  if (points.length === 1) map.setView(bounds.getCenter(), 14);
  else map.fitBounds(bounds.pad(0.15), { maxZoom: 15 });
  document.body.dataset['fitted'] = String(points.length);
}

/** Without the map library: the drivers' positions scaled into the map's box. */
function renderGrid(): void {
  const all = [...drivers.values()].flatMap((d) => (d.location ? [{ ...d.location, id: d.id }] : []));
  if (all.length === 0) return;
  const lats = all.map((d) => d.latitude),
    lons = all.map((d) => d.longitude);
  const [minLat, maxLat, minLon, maxLon] = [Math.min(...lats), Math.max(...lats), Math.min(...lons), Math.max(...lons)];
  $('map').replaceChildren(
    ...all.map((d) => {
      const dot = text('div', '', { class: 'grid-dot', title: d.id, 'aria-label': driverName(d.id) });
      dot.style.left = `${5 + 90 * ((d.longitude - minLon) / (maxLon - minLon || 1))}%`;
      dot.style.top = `${5 + 90 * (1 - (d.latitude - minLat) / (maxLat - minLat || 1))}%`;
      return dot;
    }),
  );
}

/**
 * The selected runsheet's stops (stopViews: the detail's list, in its order), then the map fitted to them. Each marker
 * is labelled with its number in the list (a built runsheet's visiting order), its words (number, kind, task, planned
 * time, progress) its SVG title; a built runsheet's route (route planning, 4.10) is a line through them.
 */
export function drawStops(stops: readonly StopView[], built: boolean): void {
  const L = leaflet();
  if (!map || !L || !stopLayer || !routeLayer) return;
  stopLayer.clearLayers();
  routeLayer.clearLayers();
  stopLabels.clear();
  const route: [number, number][] = [];
  stops.forEach((stop, i) => {
    if (!stop.at) return;
    const key = `${stop.task.id}:${stop.kind}`;
    const order = String(i + 1);
    const label = text('span', order, {
      class: 'stop-label',
      'data-stop': key,
      'data-order': order,
      'data-progress': stop.progress,
    });
    const marker = L.circleMarker(stop.at, {
      radius: 6,
      color: STOP_COLOURS[stop.kind],
      weight: 3,
      fillColor: '#fff',
      fillOpacity: 1,
      className: 'stop-marker',
    })
      .bindTooltip(label, { permanent: true, direction: 'center', offset: [0, 0], className: 'stop-tip' })
      .addTo(stopLayer as LayerGroup);
    const path = marker.getElement();
    if (path) {
      path.setAttribute('data-stop', key);
      const title = document.createElementNS('http://www.w3.org/2000/svg', 'title');
      title.textContent = stopWords(stop, order);
      path.append(title);
    }
    // A label hidden for crowding shows while its marker is pointed at.
    marker.on('mouseover', () => label.parentElement?.classList.add('pointed'));
    marker.on('mouseout', () => label.parentElement?.classList.remove('pointed'));
    stopLabels.set(key, label);
    route.push(stop.at);
  });
  markStops(stops);
  if (built && route.length > 1) L.polyline(route, { color: '#1d5fbf', weight: 3, opacity: 0.7 }).addTo(routeLayer);
  fitMap();
  layoutLabels();
}

/** A stop in words, as its marker's title says it: "3. drop-off T-17 · planned 09:12 GMT+8 · to do". */
const stopWords = (stop: StopView, order: string) =>
  [
    `${order}. ${stop.kind === 'pickup' ? 'pickup' : 'drop-off'} ${stop.task.task_ref || stop.task.id}`,
    stop.planned ? `planned ${clockTime(stop.planned)}` : '',
    PROGRESS_WORDS[stop.progress],
  ]
    .filter(Boolean)
    .join(' · ');

/** The stops' progress on their labels (a stop done, failed or cancelled is drawn faint), as the detail reads it. */
export function markStops(stops: readonly StopView[]): void {
  for (const stop of stops) {
    const label = stopLabels.get(`${stop.task.id}:${stop.kind}`);
    if (!label || label.dataset['progress'] === stop.progress) continue;
    label.dataset['progress'] = stop.progress;
  }
  for (const label of stopLabels.values())
    label.parentElement?.classList.toggle('stop-tip-ended', label.dataset['progress'] !== 'to_do');
}

/** The selected runsheet's stops taken off the map. */
export const clearStops = () => {
  stopLabels.clear();
  stopLayer?.clearLayers();
  routeLayer?.clearLayers();
};

/** The colours of a reviewed plan's routes, in the order the planner's table lists them (app.css's swatches too). */
export const PLAN_COLOURS = ['#1d5fbf', '#c1121f', '#2a9d8f', '#e9a100', '#6a4c93', '#3a5a40', '#d62f91', '#5c6570'];

/** One route of a reviewed plan: its stops in visiting order (an insertion's remaining ones), its words as a title. */
export interface PlanRoute {
  id: string;
  title: string;
  stops: readonly { latitude: number; longitude: number }[];
}

/**
 * A reviewed plan on the map (the planner's dry run): each route a line through its stops in its colour, each stop a
 * small dot, the route's words (name, driver, km, hours) the line's SVG title; the map fitted to it. Nothing a user
 * typed reaches Leaflet as a string.
 */
export function drawPlan(routes: readonly PlanRoute[]): void {
  const L = leaflet();
  planPoints = [];
  if (!map || !L || !planLayer) return;
  planLayer.clearLayers();
  routes.forEach((route, i) => {
    const colour = PLAN_COLOURS[i % PLAN_COLOURS.length] as string;
    const line: [number, number][] = route.stops.map((stop) => [stop.latitude, stop.longitude]);
    for (const at of line) {
      L.circleMarker(at, {
        radius: 3,
        color: colour,
        weight: 2,
        fillColor: colour,
        fillOpacity: 1,
        className: 'plan-stop',
      })
        .addTo(planLayer as LayerGroup)
        .getElement()
        ?.setAttribute('data-plan-route', route.id);
      planPoints.push({ lat: at[0], lng: at[1] });
    }
    if (line.length > 1) {
      const drawn = L.polyline(line, { color: colour, weight: 3, opacity: 0.8 }).addTo(planLayer as LayerGroup);
      const path = drawn.getElement?.();
      if (path) {
        path.setAttribute('data-plan-route', route.id);
        path.classList.add('plan-route');
        const title = document.createElementNS('http://www.w3.org/2000/svg', 'title');
        title.textContent = route.title;
        path.append(title);
      }
    }
  });
  if (!view.selected) fitMap();
}

/** The reviewed plan taken off the map (applied, discarded, signed out). */
export function clearPlan(): void {
  planPoints = [];
  planLayer?.clearLayers();
  if (map && !view.selected) fitMap();
}
