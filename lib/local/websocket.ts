/**
 * The local stand-in for API Gateway's WebSocket API: `ws://localhost:<port>/ws?token=…`, route selection on the
 * frame's `action`, the $connect/$disconnect/subscribe/$default handler modules called with API Gateway's events,
 * and the management API (`POST`/`DELETE`/`GET /@connections/{id}`) that the SDK's PostToConnection calls. It closes
 * connections as API Gateway does: idle for 10 minutes or open for 2 hours (1001), a frame too big, not UTF-8 or
 * binary (1009, 1007, 1003).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyResultV2 } from 'aws-lambda';
import { type WebSocket, WebSocketServer } from 'ws';
import { GATEWAY_HEAD_BYTES, requestHeadBytes } from '#lib/local/gateway-limits';
import { ROOT } from '#lib/paths';
import { asFunction } from '#shared/local-invocation';
import { connectionLimitsMs, WEBSOCKET_GOING_AWAY, WEBSOCKET_MESSAGE_BYTES } from '#shared/notifications/keepalive';
import { websocketRoutes } from '#shared/routes';

type WsHandler = (event: unknown) => Promise<APIGatewayProxyResultV2>;

const handlers = new Map<string, Promise<WsHandler>>();

function handlerFor(routeKey: string): Promise<WsHandler> {
  const route =
    websocketRoutes.find((r) => r.routeKey === routeKey) ?? websocketRoutes.find((r) => r.routeKey === '$default')!;
  let loaded = handlers.get(route.routeKey);
  if (!loaded) {
    loaded = import(pathToFileURL(join(ROOT, 'functions', `${route.handler}.ts`)).href).then(
      (m: { handler: WsHandler }) => (event: unknown) => asFunction(route.handler, () => m.handler(event)),
    );
    handlers.set(route.routeKey, loaded);
  }
  return loaded;
}

function wsEvent(routeKey: string, eventType: string, connectionId: string, extra: Record<string, unknown> = {}) {
  const now = Date.now();
  return {
    requestContext: {
      routeKey,
      eventType,
      connectionId,
      messageId: randomBytes(8).toString('base64url'),
      extendedRequestId: randomBytes(8).toString('base64url'),
      requestId: randomBytes(8).toString('base64url'),
      domainName: 'localhost',
      stage: 'local',
      apiId: 'local',
      connectedAt: now,
      requestTimeEpoch: now,
    },
    isBase64Encoded: false,
    ...extra,
  };
}

const statusOf = (result: APIGatewayProxyResultV2) => (typeof result === 'string' ? 200 : (result.statusCode ?? 200));

export class LocalWebSocketGateway {
  private readonly sockets = new Map<string, WebSocket>();
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: WEBSOCKET_MESSAGE_BYTES });
  /** Each connection's chain of handler calls, so that shutdown can wait for them. */
  private readonly chains = new Map<string, Promise<void>>();
  private closing = false;

  attach(http: Server): void {
    http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.upgrade(request, socket, head).catch((error: unknown) => {
        console.error('websocket upgrade failed', error);
        socket.destroy();
      });
    });
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer) {
    // A client that resets while $connect runs: that socket goes, the process stays.
    socket.on('error', () => socket.destroy());
    if (requestHeadBytes(request) > GATEWAY_HEAD_BYTES) {
      socket.end('HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const connectionId = randomBytes(12).toString('base64url');
    const result = await (await handlerFor('$connect'))(
      wsEvent('$connect', 'CONNECT', connectionId, {
        queryStringParameters: Object.fromEntries(url.searchParams),
        headers: request.headers,
      }),
    );
    const status = statusOf(result);
    if (status !== 200) {
      socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Forbidden'}\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    this.server.handleUpgrade(request, socket, head, (ws) => {
      this.sockets.set(connectionId, ws);
      // API Gateway closes a connection 10 minutes after the client's last frame and 2 hours after it opened, with
      // 1001 (shared/notifications/keepalive.ts; read per connection, so a test may shorten them). Only the client's
      // frames count: what the service posts to it, and WebSocket pings, keep nothing open.
      const limits = connectionLimitsMs();
      const goAway = () => ws.close(WEBSOCKET_GOING_AWAY.code, WEBSOCKET_GOING_AWAY.reason);
      const lifetime = setTimeout(goAway, limits.maxMs);
      let idle = setTimeout(goAway, limits.idleMs);
      const heard = () => {
        clearTimeout(idle);
        idle = setTimeout(goAway, limits.idleMs);
      };
      // Frames of one connection are handled in order, as API Gateway does for a route's integration calls.
      let chain = Promise.resolve();
      const track = () => {
        this.chains.set(connectionId, chain);
        const settled = chain;
        void settled.then(() => {
          if (this.chains.get(connectionId) === settled) this.chains.delete(connectionId);
        });
      };
      // A frame over 128 KB (API Gateway's message limit) or a text frame that is not UTF-8: `ws` has closed this
      // connection already (1009, 1007), as API Gateway does. Without a listener the error would end the process.
      ws.on('error', (error) => console.warn(`websocket ${connectionId} closed: ${error.message}`));
      ws.on('message', (data, isBinary) => {
        heard();
        // API Gateway's WebSocket API takes text frames only: a binary one closes the connection (1003).
        if (isBinary) {
          ws.close(1003, 'binary frames are not supported');
          return;
        }
        const body = data.toString();
        let action = '$default';
        try {
          const parsed = JSON.parse(body) as { action?: unknown };
          if (typeof parsed.action === 'string' && websocketRoutes.some((r) => r.routeKey === parsed.action))
            action = parsed.action;
        } catch {
          // not JSON: $default
        }
        // Stamped on arrival (`requestTimeEpoch`), not when its turn in the chain comes: the rate limit counts arrivals.
        const event = wsEvent(action, 'MESSAGE', connectionId, { body });
        chain = chain
          .then(async () => {
            await (await handlerFor(action))(event);
          })
          .catch((error: unknown) => console.error('websocket route failed', error));
        track();
      });
      ws.on('close', () => {
        clearTimeout(lifetime);
        clearTimeout(idle);
        this.sockets.delete(connectionId);
        // A host shutting down leaves the records to TTL; its emulators are stopping too.
        if (this.closing) return;
        chain = chain
          .then(async () => {
            await (await handlerFor('$disconnect'))(wsEvent('$disconnect', 'DISCONNECT', connectionId));
          })
          .catch((error: unknown) => console.error('websocket disconnect failed', error));
        track();
      });
    });
  }

  /** Resolves when every handler call under way has finished (benchmarks and tests). */
  async idle(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  /**
   * The management API: answers as API Gateway does (410 for a connection that is gone, 413 PayloadTooLargeException
   * for a message over 128 KiB, which the cloud never delivers).
   */
  manage(
    method: string,
    connectionId: string,
    body: Buffer,
  ): { status: number; body?: string; headers?: Record<string, string> } {
    const socket = this.sockets.get(connectionId);
    if (!socket || socket.readyState !== socket.OPEN) return { status: 410, body: JSON.stringify({ message: 'Gone' }) };
    if (method === 'POST' && body.length > WEBSOCKET_MESSAGE_BYTES) {
      return {
        status: 413,
        headers: { 'x-amzn-ErrorType': 'PayloadTooLargeException' },
        body: JSON.stringify({ message: 'The data has exceeded the maximum size allowed.' }),
      };
    }
    if (method === 'POST') {
      socket.send(body.toString('utf8'));
      return { status: 200 };
    }
    if (method === 'DELETE') {
      socket.close(1000, 'closed by the server');
      return { status: 204 };
    }
    return { status: 200, body: JSON.stringify({ connectedAt: new Date().toISOString(), identity: {} }) };
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const socket of this.sockets.values()) socket.terminate();
    this.server.close();
    await this.idle();
    this.closing = false;
  }
}

export const gateway = new LocalWebSocketGateway();
