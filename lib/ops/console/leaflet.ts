/**
 * The few parts of Leaflet (1.9, served at /ops/assets/leaflet.js and loaded before the console) the console uses,
 * typed here rather than through @types/leaflet: a dozen calls, and no install for the page's one optional library.
 */
export interface LatLng {
  lat: number;
  lng: number;
}
export type LatLngLike = LatLng | [number, number];

export interface Bounds {
  getCenter(): LatLng;
  pad(ratio: number): Bounds;
}

export interface Layer {
  addTo(target: LeafletMap | LayerGroup): this;
  /** The layer's SVG element, once on the map (a vector layer's). */
  getElement?(): Element | undefined;
}

/** The tile layer's load events: the console says so on the map when no tile comes (no network). */
export interface TileLayer extends Layer {
  on(event: 'tileerror' | 'tileload', handler: () => void): this;
}

export interface CircleMarker extends Layer {
  options: { color?: string; fillOpacity?: number };
  setLatLng(at: LatLngLike): this;
  getLatLng(): LatLng;
  setStyle(style: { color?: string; fillOpacity?: number }): this;
  /** The marker's SVG element, once on the map. */
  getElement(): Element | undefined;
  on(event: 'mouseover' | 'mouseout', handler: () => void): this;
  bindTooltip(
    content: HTMLElement,
    options: {
      permanent: boolean;
      direction: 'left' | 'right' | 'center';
      offset: [number, number];
      className: string;
    },
  ): this;
}

export interface LayerGroup extends Layer {
  clearLayers(): this;
  /** The console keeps only circle markers in the groups it reads back (the route line has a group of its own). */
  getLayers(): CircleMarker[];
}

export interface LeafletMap {
  setView(center: LatLngLike, zoom: number): this;
  /** The map's size read again from its container (Leaflet tracks the window's resizing only). */
  invalidateSize(options: { pan: boolean }): this;
  on(events: 'zoomend moveend' | 'resize', handler: () => void): this;
  fitBounds(bounds: Bounds, options: { maxZoom: number }): this;
  remove(): this;
}

export interface Leaflet {
  map(id: string, options: { zoomControl: boolean; dragging: boolean }): LeafletMap;
  tileLayer(template: string, options: { maxZoom: number; attribution: string }): TileLayer;
  layerGroup(): LayerGroup;
  circleMarker(
    at: LatLngLike,
    options: {
      radius: number;
      color: string;
      weight?: number;
      fillColor?: string;
      fillOpacity: number;
      className?: string;
    },
  ): CircleMarker;
  polyline(points: LatLngLike[], options: { color: string; weight: number; opacity: number }): Layer;
  latLngBounds(points: LatLngLike[]): Bounds;
  Browser: { mobile: boolean };
}

/** Leaflet when its script loaded; undefined without it (the console then places the drivers on a plain grid). */
export const leaflet = (): Leaflet | undefined => (window as { L?: Leaflet }).L;
