/**
 * The map: the drivers as markers coloured by their state, each labelled with their name (an element, as text: a
 * string is HTML to Leaflet), and the selected runsheet's stops. Without the map library, the drivers' positions on
 * a plain grid.
 */

import { type DriverState, isStale, stateOf } from './derive.ts';
import { $, clockTime, config, text } from './dom.ts';
import { type CircleMarker, type LatLng, type LayerGroup, type LeafletMap, leaflet } from './leaflet.ts';
import { driverName, drivers, type PlannedStop, type Task, view } from './state.ts';

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
const STOP_COLOURS = { pickup: '#6a4c93', dropoff: '#c1121f' } as const;
const markers = new Map<string, CircleMarker>();
const labels = new Map<string, HTMLElement>();
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
  map.on('zoomend moveend', declutter);
  driverLayer = L.layerGroup().addTo(map);
  routeLayer = L.layerGroup().addTo(map);
  stopLayer = L.layerGroup().addTo(map);
}

/** The map and its markers gone (sign-out). */
export function removeMap(): void {
  markers.clear();
  labels.clear();
  if (map) {
    map.remove();
    map = driverLayer = stopLayer = routeLayer = null;
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
  else declutter();
}

/**
 * Driver labels that would cover one another (issue 46.7): the first of each overlap shown, the others hidden
 * (`crowded`) until their marker is pointed at or the map is zoomed in far enough to part them. All measured in one
 * pass, after every label is shown again.
 */
function declutter(): void {
  const tips = [...labels.values()].flatMap((label) => (label.parentElement ? [label.parentElement] : []));
  for (const tip of tips) tip.classList.remove('crowded');
  const boxes = tips.map((tip) => tip.getBoundingClientRect());
  const kept: DOMRect[] = [];
  boxes.forEach((box, i) => {
    const covers = kept.some(
      (k) => k.left < box.right && box.left < k.right && k.top < box.bottom && box.top < k.bottom,
    );
    if (covers) tips[i]?.classList.add('crowded');
    else kept.push(box);
  });
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
  } else for (const m of markers.values()) points.push(m.getLatLng());
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
 * The selected runsheet's pickups and drop-offs, then the map fitted to them. A built runsheet (route planning, 4.10)
 * shows its planned stops numbered in visiting order, each with its planned time, and its route as a line through them.
 */
export function drawStops(tasks: Task[] | undefined, planned: PlannedStop[] | undefined = undefined): void {
  const L = leaflet();
  if (!map || !L || !stopLayer || !routeLayer) return;
  stopLayer.clearLayers();
  routeLayer.clearLayers();
  const nameOf = new Map((tasks || []).map((task) => [task.id, task.task_ref || task.id]));
  const stopMarker = (at: [number, number], colour: string, label: HTMLElement) =>
    L.circleMarker(at, {
      radius: 6,
      color: colour,
      weight: 3,
      fillColor: '#fff',
      fillOpacity: 1,
      className: 'stop-marker',
    })
      .bindTooltip(label, { permanent: true, direction: 'left', offset: [-8, 0], className: 'stop-tip' })
      .addTo(stopLayer as LayerGroup);
  if (planned?.length) {
    planned.forEach((stop, i) => {
      const kind = stop.kind === 'pickup' ? 'pickup' : 'drop-off';
      const label = text(
        'span',
        `${i + 1} ${nameOf.get(stop.task_id) || stop.task_id} ${kind} ${clockTime(stop.start_utc)}`,
        {
          class: 'stop-label',
          'data-stop': `${stop.task_id}:${stop.kind}`,
          'data-order': String(i + 1),
        },
      );
      stopMarker([stop.latitude, stop.longitude], STOP_COLOURS[stop.kind], label);
    });
    L.polyline(
      planned.map((stop): [number, number] => [stop.latitude, stop.longitude]),
      { color: '#1d5fbf', weight: 3, opacity: 0.7 },
    ).addTo(routeLayer);
    fitMap();
    return;
  }
  for (const task of tasks || []) {
    const name = task.task_ref || task.id;
    for (const [kind, address] of [
      ['pickup', task.from_address],
      ['dropoff', task.to_address],
    ] as const) {
      if (address?.latitude == null || address?.longitude == null) continue;
      const label = text('span', `${name} ${kind === 'pickup' ? 'pickup' : 'drop-off'}`, {
        class: 'stop-label',
        'data-stop': `${task.id}:${kind}`,
      });
      stopMarker([address.latitude, address.longitude], STOP_COLOURS[kind], label);
    }
  }
  fitMap();
}

/** The selected runsheet's stops taken off the map. */
export const clearStops = () => {
  stopLayer?.clearLayers();
  routeLayer?.clearLayers();
};
