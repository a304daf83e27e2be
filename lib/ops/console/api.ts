/**
 * The console's calls (the bearer token sent, the service's clock learnt from each answer, a refusal thrown) and its
 * subscriptions on the live connection.
 */
import type { ClientFrame } from '../../client/index.ts';
import { enc } from './dom.ts';
import { clock, session, subscribed } from './state.ts';

/** A refused call: the problem's `detail` (or title) as its message, its status, its body. */
export interface Refusal extends Error {
  status?: number;
  body?: unknown;
}

export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, {
    ...init,
    headers: {
      'content-type': 'application/json',
      ...(session.token ? { authorization: `Bearer ${session.token}` } : {}),
    },
  });
  const body = await response.json().catch(() => ({}));
  const served = typeof body.server_time === 'string' ? Date.parse(body.server_time) : Number.NaN;
  if (Number.isFinite(served)) clock.offset = served - Date.now();
  if (!response.ok)
    throw Object.assign(new Error(body.detail || body.title || `HTTP ${response.status}`), {
      status: response.status,
      body,
    });
  return body as T;
}

/** Every page of a list (`meta.next_page_token`), at most `pages` of them. */
export async function allPages<Item>(path: string, key: string, pages = 20): Promise<Item[]> {
  const items: Item[] = [];
  const join = path.includes('?') ? '&' : '?';
  for (let next = '', i = 0; i < pages; i++) {
    const list = await api<Record<string, Item[] | undefined> & { meta?: { next_page_token?: string | null } }>(
      `${path}${next}`,
    );
    items.push(...(list[key] || []));
    if (!list.meta?.next_page_token) break;
    next = `${join}page_token=${enc(list.meta.next_page_token)}`;
  }
  return items;
}

/** Runs `work` over `items`, `width` at a time (while signed in). */
export async function eachLimited<Item>(items: Item[], width: number, work: (item: Item) => Promise<unknown>) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (queue.length && session.signedIn) await work(queue.shift() as Item).catch(() => {});
    }),
  );
}

/** Joins the channels the connection does not hold yet (when it is open; it asks for all again when it opens). */
export function subscribe(channels: string[]): void {
  const fresh = channels.filter((c) => !subscribed.has(c));
  const socket = session.socket;
  if (fresh.length === 0 || !socket || socket.readyState !== 1) return;
  for (const c of fresh) subscribed.add(c);
  socket.send(JSON.stringify({ action: 'subscribe', channels: fresh } satisfies ClientFrame));
}
