/**
 * The local WebSocket gateway closes connections as API Gateway does (issue 35 item 8): 10 minutes after the client's
 * last frame and 2 hours after it opened, with 1001 "Going Away". Shortened here (`LOCAL_WEBSOCKET_IDLE_MS`,
 * `LOCAL_WEBSOCKET_MAX_MS`, read per connection); the keepalive frame `{"action":"ping"}` holds a connection open and
 * is answered with `{"type":"pong"}`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { client, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { openSocket } from '../support/sockets.ts';

let host: RunningHost;
let token: string;
let adminId: string;

beforeAll(async () => {
  host = await startTestHost();
  const session = await loginAs(client(host.url), ADMIN.email, ADMIN.password);
  token = session.bearer_token;
  adminId = session.user.id;
});
afterEach(() => {
  delete process.env['LOCAL_WEBSOCKET_IDLE_MS'];
  delete process.env['LOCAL_WEBSOCKET_MAX_MS'];
});
afterAll(() => host?.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the WebSocket connection limits', () => {
  it('closes a connection that says nothing for the idle limit with 1001', async () => {
    process.env['LOCAL_WEBSOCKET_IDLE_MS'] = '1000';
    const silent = await openSocket(host.url, token);
    expect(await silent.when(() => silent.closed.code !== undefined)).toBe(true);
    expect(silent.closed.code).toBe(1001);
  }, 40_000);

  it('counts only what the client sends: a socket that only listens is closed while events reach it', async () => {
    process.env['LOCAL_WEBSOCKET_IDLE_MS'] = '1500';
    const api = client(host.url);
    const listening = await openSocket(host.url, token);
    listening.subscribe([`user.${adminId}`]);
    expect(await listening.when(() => listening.frames.some((frame) => frame.type === 'subscribed'))).toBe(true);
    let sent = 0;
    while (listening.closed.code === undefined && sent < 100) {
      await api.post(
        '/v1/events',
        { events: [{ channel: `user.${adminId}`, name: 'tick', data: { n: sent } }] },
        token,
      );
      sent++;
      await sleep(250);
    }
    expect(listening.closed.code).toBe(1001);
    expect(listening.events('tick').length).toBeGreaterThan(1);
  }, 60_000);

  it('keeps a connection that sends the keepalive open past the idle limit, and answers each with a pong', async () => {
    process.env['LOCAL_WEBSOCKET_IDLE_MS'] = '1500';
    const kept = await openSocket(host.url, token);
    const silent = await openSocket(host.url, token);
    const ping = setInterval(() => kept.socket.send(JSON.stringify({ action: 'ping' })), 300);
    try {
      // Until the silent one is closed, and as long again: the kept one has outlived two idle limits.
      expect(await silent.when(() => silent.closed.code !== undefined)).toBe(true);
      await sleep(1500);
      expect(kept.closed.code).toBeUndefined();
      expect(kept.socket.readyState).toBe(kept.socket.OPEN);
      expect(kept.frames.length).toBeGreaterThan(0);
      expect(kept.frames.every((frame) => frame.type === 'pong')).toBe(true);
    } finally {
      clearInterval(ping);
    }
    // Once it stops, the idle limit closes it too.
    expect(await kept.when(() => kept.closed.code !== undefined)).toBe(true);
    expect(kept.closed.code).toBe(1001);
  }, 40_000);

  it('closes a connection at the connection limit even while it keeps sending', async () => {
    process.env['LOCAL_WEBSOCKET_MAX_MS'] = '2000';
    const busy = await openSocket(host.url, token);
    const ping = setInterval(() => busy.socket.send(JSON.stringify({ action: 'ping' })), 200);
    try {
      expect(await busy.when(() => busy.closed.code !== undefined)).toBe(true);
      expect(busy.closed.code).toBe(1001);
      expect(busy.frames.some((frame) => frame.type === 'pong')).toBe(true);
    } finally {
      clearInterval(ping);
    }
  }, 40_000);
});
