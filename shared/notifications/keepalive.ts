/**
 * How long API Gateway keeps a WebSocket connection, and the keepalive that holds one open (issue 35.8). API Gateway
 * closes a connection after 10 minutes without a frame from the client, and after 2 hours whatever it does (neither
 * is configurable); it closes with 1001 "Going Away". A client that wants to stay connected sends the keepalive frame
 * well inside the idle limit (a third of it) and reconnects after any close. Browsers cannot send WebSocket ping
 * control frames, so the keepalive is a message: `{"action":"ping"}`, which the $default route answers with
 * `{"type":"pong"}`.
 */

export const WEBSOCKET_IDLE_TIMEOUT_S = 600;
export const WEBSOCKET_MAX_CONNECTION_S = 7200;
/**
 * API Gateway's largest WebSocket message, either way (128 KiB): a client's bigger frame closes its connection (1009),
 * and PostToConnection refuses a bigger one with 413 PayloadTooLargeException.
 */
export const WEBSOCKET_MESSAGE_BYTES = 128 * 1024;
export const WEBSOCKET_GOING_AWAY = { code: 1001, reason: 'Going away' } as const;

export const KEEPALIVE_FRAME = { action: 'ping' } as const;
export const KEEPALIVE_ANSWER = { type: 'pong' } as const;

/** The keepalive frame, however it is spaced (`{"action":"ping"}`, `{ "action" : "ping" }`). */
export function isKeepalive(body: string | undefined): boolean {
  if (!body || body.length > 64) return false;
  try {
    return (JSON.parse(body) as { action?: unknown }).action === KEEPALIVE_FRAME.action;
  } catch {
    return false;
  }
}

const override = (value: string | undefined) => {
  const ms = Number(value);
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
};

/**
 * The connection limits in milliseconds: API Gateway's, unless `LOCAL_WEBSOCKET_IDLE_MS` / `LOCAL_WEBSOCKET_MAX_MS`
 * shorten them (tests do, to see a close without waiting 10 minutes). Only the local host reads them (its gateway,
 * and the keepalive of the /ops page it serves); the cloud's limits are API Gateway's own.
 */
export function connectionLimitsMs(env: Record<string, string | undefined> = process.env) {
  return {
    idleMs: override(env['LOCAL_WEBSOCKET_IDLE_MS']) ?? WEBSOCKET_IDLE_TIMEOUT_S * 1000,
    maxMs: override(env['LOCAL_WEBSOCKET_MAX_MS']) ?? WEBSOCKET_MAX_CONNECTION_S * 1000,
  };
}

/** How often a client sends the keepalive: a third of the idle limit (200 s in the cloud), so a late timer is fine. */
export const keepaliveIntervalMs = (idleMs: number) => Math.floor(idleMs / 3);
