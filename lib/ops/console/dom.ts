/**
 * The page's elements (shared/ops/page.ts writes them) and the console's one way of putting text in them: elements
 * built here with `textContent`, never `innerHTML`, so that nothing a user typed is ever read as HTML.
 */

/** What the page's `<script id="config" type="application/json">` carries (shared/ops/page.ts, `opsPage`). */
export interface PageConfig {
  tiles: string;
  websocketUrl: string;
  keepaliveMs: number;
}

/** The page's element `id` (every id the console asks for is in the page). */
export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
export const input = (id: string) => $<HTMLInputElement>(id);

export const config: PageConfig = JSON.parse($('config').textContent ?? '{}');

/** An element holding `value` as text, with the attributes given (values as text too). */
export function text<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  value: unknown,
  attrs: Record<string, unknown> = {},
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  el.textContent = value == null ? '' : String(value);
  for (const [k, v] of Object.entries(attrs)) if (v != null) el.setAttribute(k, String(v));
  return el;
}
export const button = (label: string, attrs: Record<string, unknown> = {}) =>
  text('button', label, { type: 'button', ...attrs });

/** Re-rendering keeps the keyboard where it was: the same runsheet's button gets the focus back. */
export function keepingFocus(render: () => void): void {
  const active = document.activeElement as HTMLElement | null;
  const focusKey = active?.dataset?.['focusKey'];
  render();
  if (focusKey && document.activeElement !== active)
    document.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus();
}

/**
 * Puts `nodes` in `container` unless it already shows exactly that: a refresh that changes nothing leaves the
 * elements (and a click or hover on them) alone.
 */
export function show(container: HTMLElement, nodes: HTMLElement[]): void {
  const steady = (html: string) => html.replace(/(<span class="countdown"[^>]*>)[^<]*/g, '$1');
  if (steady(nodes.map((node) => node.outerHTML).join('')) === steady(container.innerHTML)) return;
  container.replaceChildren(...nodes);
}

export const enc = encodeURIComponent;
/** A time of day with its zone named (the browser's, e.g. "09:12 GMT+8"): the dispatcher may sit elsewhere (46.7). */
export const clockTime = (iso: string | null | undefined) =>
  iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', timeZoneName: 'short' }) : '';
export const naturally = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
