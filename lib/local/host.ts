/**
 * The local host behind `npm start`: every route of the route table on one port. Each request is turned into the
 * API Gateway HTTP API event, the authorizer function runs first as API Gateway would run it, then the route's own
 * handler module. Local-only helpers (`/health`, `/openapi.json`, `/docs`, `/_local/…`) exist here and nowhere else;
 * `/ops` (the live operations page) and `/track/{token}` (a recipient's tracking page) are served here and, in the
 * cloud, by functions/system/ops.ts.
 *
 * The local-only surfaces that need no credential (`/_local/*`: the mail and push outboxes; `/@connections/…`: the
 * WebSocket management API) answer without CORS, and refuse with a 403 any request a web page could have sent: an
 * `Origin` other than this host's own, or a `Host` that is neither an IP address, `localhost` nor the configured
 * `HOST` (a DNS-rebinding page reaches the host under its own name). The API routes keep their CORS.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { APIGatewayProxyResultV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { authorizerEvent, gatewayRequestId, type IncomingRequest, lambdaContext, proxyEvent } from '#lib/local/events';
import { GATEWAY_HEAD_BYTES, PARSER_HEAD_BYTES, requestHeadBytes } from '#lib/local/gateway-limits';
import { gateway } from '#lib/local/websocket';
import { openApiDocument } from '#lib/openapi';
import { API_FUNCTION_TIMEOUT_S, AUTHORIZER_TIMEOUT_S } from '#shared/functions';
import type { Handler } from '#shared/http/endpoint';
import {
  forbidden,
  internal,
  invalidField,
  type Problem,
  payloadTooLarge,
  problemBody,
  problemOf,
} from '#shared/http/problems';
import { CORS_HEADERS, problemAsReply, toResult } from '#shared/http/responses';
import { matchRoute, noRouteProblem } from '#shared/http/route-match';
import { MAX_MULTIPART_BYTES, uploadTooLarge } from '#shared/imports/create';
import { asFunction } from '#shared/local-invocation';
import { connectionLimitsMs } from '#shared/notifications/keepalive';
import { OPS_ASSET_HEADERS, opsAsset, opsConfig, opsPage, opsPageHeaders } from '#shared/ops/page';
import { localOutbox } from '#shared/ports/mail';
import { localPush } from '#shared/ports/push';
import { CACHE, DOCS_ASSETS, DOCS_PAGE, HEALTH } from '#shared/reference/page';
import { type RouteDef, routes } from '#shared/routes';
import { trackingPage, trackingPageHeaders } from '#shared/tracking/page';

export { matchRoute };

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
const require = createRequire(import.meta.url);

const modules = new Map<string, Promise<Handler>>();

function loadHandler(handlerPath: string): Promise<Handler> {
  let loaded = modules.get(handlerPath);
  if (!loaded) {
    const file = pathToFileURL(join(ROOT, 'functions', `${handlerPath}.ts`)).href;
    loaded = import(file).then((module: { handler: Handler }) => module.handler);
    modules.set(handlerPath, loaded);
  }
  return loaded;
}

/** Loads every handler module, so the first request of each route is not a cold start. */
export async function preloadHandlers(): Promise<void> {
  await Promise.all(
    [...new Set((routes as readonly RouteDef[]).map((r) => r.handler)), 'auth/authorizer'].map(loadHandler),
  );
}

/**
 * I3's multipart upload has one limit of its own, lower than API Gateway's, and its own 413 that says so; a route
 * with a body bound of its own (X23's) is read no further than it, and answered the function's 413.
 */
const bodyLimit = (route?: RouteDef) =>
  route && (route.specId ?? route.id) === 'I3'
    ? { bytes: MAX_MULTIPART_BYTES, problem: () => problemOf(uploadTooLarge()) }
    : route?.maxBodyBytes !== undefined
      ? { bytes: route.maxBodyBytes, problem: () => payloadTooLarge(route.maxBodyBytes!) }
      : { bytes: MAX_REQUEST_BYTES, problem: () => payloadTooLarge(MAX_REQUEST_BYTES) };

async function readBody(request: IncomingMessage, limit = bodyLimit()): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit.bytes) throw limit.problem();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function send(response: ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer) {
  response.writeHead(status, headers);
  response.end(body);
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  requestId: string,
  type = 'application/json; charset=utf-8',
) {
  send(response, status, { ...CORS_HEADERS, 'Content-Type': type, 'X-Request-Id': requestId }, JSON.stringify(body));
}

/** JSON of a local-only surface: no CORS, so that no page of another origin may read it. */
function sendLocalJson(response: ServerResponse, body: unknown, requestId: string) {
  send(
    response,
    200,
    { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId, 'Cache-Control': 'no-store' },
    JSON.stringify(body),
  );
}

/** `/_local/…` and the WebSocket management API (`/@connections/{id}`, with or without a stage before it). */
const isLocalOnly = (path: string) =>
  path === '/_local' || path.startsWith('/_local/') || /\/@connections(\/|$)/.test(path);

/** The host name of a `Host` or `Origin` authority (`[::1]:3000` → `::1`), lower case, or undefined. */
function hostNameOf(authority: string): string | undefined {
  try {
    return new URL(`http://${authority}`).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Why a request to a local-only surface is refused, if it is: a browser page of another origin sends its `Origin`
 * (`null` included), and a DNS-rebinding page reaches this host under the attacker's own name in `Host`.
 */
function localOnlyRefusal(request: IncomingMessage, configuredHost: string | undefined): string | undefined {
  const host = request.headers.host;
  if (host !== undefined) {
    const name = hostNameOf(host);
    const known =
      name !== undefined &&
      (name === 'localhost' ||
        isIP(name) !== 0 ||
        (configuredHost !== undefined && name === configuredHost.toLowerCase()));
    if (!known) return 'the local-only endpoints answer requests to localhost or an IP address only';
  }
  const origin = request.headers.origin;
  if (origin !== undefined) {
    let own = false;
    try {
      const url = new URL(origin);
      own = ['http:', 'https:'].includes(url.protocol) && host !== undefined && url.host === host.toLowerCase();
    } catch {
      own = false;
    }
    if (!own) return 'the local-only endpoints do not answer pages of another origin';
  }
  return undefined;
}

/** A 403 problem+json without CORS. */
function sendLocalRefusal(response: ServerResponse, detail: string, requestId: string) {
  send(
    response,
    403,
    { 'Content-Type': 'application/problem+json', 'X-Request-Id': requestId },
    JSON.stringify(problemBody(forbidden(detail), requestId)),
  );
}

/**
 * The same problem+json answer, headers included, as the functions give (shared/http/responses.ts); `gatewayId`:
 * API Gateway's `apigw-requestid`, which it adds to every answer of the API.
 */
function sendProblem(response: ServerResponse, problem: Problem, requestId: string, gatewayId?: string) {
  writeResult(response, toResult(problemAsReply(problem, requestId), requestId), gatewayId);
}

function writeResult(response: ServerResponse, result: APIGatewayProxyResultV2, gatewayId?: string) {
  const structured: APIGatewayProxyStructuredResultV2 =
    typeof result === 'string'
      ? { statusCode: 200, body: result, headers: { 'Content-Type': 'application/json' } }
      : result;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {})) headers[name] = String(value);
  if (gatewayId) headers['apigw-requestid'] = gatewayId;
  const body = structured.body ?? '';
  send(
    response,
    structured.statusCode ?? 200,
    headers,
    structured.isBase64Encoded ? Buffer.from(body, 'base64') : body,
  );
}

async function localRoute(path: string, url: URL, response: ServerResponse, requestId: string): Promise<boolean> {
  switch (path) {
    case '/health':
      sendJson(response, 200, HEALTH, requestId);
      return true;
    case '/openapi.json':
      sendJson(response, 200, openApiDocument(`${url.protocol}//${url.host}`), requestId);
      return true;
    case '/docs':
    case '/docs/':
      send(response, 200, { 'Content-Type': 'text/html; charset=utf-8', 'X-Request-Id': requestId }, DOCS_PAGE);
      return true;
    case '/ops':
    case '/ops/': {
      // Read per request (cheap), so a test may change it; startLocal checks it once at start.
      const config = opsConfig(process.env, connectionLimitsMs().idleMs);
      send(response, 200, { ...opsPageHeaders(config), 'X-Request-Id': requestId }, opsPage(config));
      return true;
    }
    case '/_local/outbox':
      sendLocalJson(response, { messages: localOutbox.read(url.searchParams.get('to') ?? undefined) }, requestId);
      return true;
    case '/_local/push-outbox':
      sendLocalJson(response, { messages: localPush.read(url.searchParams.get('user_id') ?? undefined) }, requestId);
      return true;
  }
  if (/^\/track\/[^/]+$/.test(path)) {
    // A recipient's tracking page (contract 4.11): the same page for every token; its script asks X29.
    const config = opsConfig(process.env, connectionLimitsMs().idleMs);
    send(response, 200, { ...trackingPageHeaders(config), 'X-Request-Id': requestId }, trackingPage());
    return true;
  }
  const opsFile = /^\/ops\/assets\/([\w.-]+)$/.exec(path);
  if (opsFile) {
    const found = await opsAsset(opsFile[1]!, ({ source }) => join(ROOT, source));
    if (!found) return false;
    send(response, 200, { ...OPS_ASSET_HEADERS, 'Content-Type': found.type }, found.body);
    return true;
  }
  const asset = /^\/docs\/assets\/([\w.-]+)$/.exec(path);
  const type = asset && Object.hasOwn(DOCS_ASSETS, asset[1]!) ? DOCS_ASSETS[asset[1]!] : undefined;
  if (asset && type) {
    const file = join(dirname(require.resolve('swagger-ui-dist/package.json')), asset[1]!);
    const bytes = await readFile(file).catch(() => undefined);
    if (!bytes) return false;
    send(response, 200, { 'Content-Type': type, 'Cache-Control': CACHE.asset }, bytes);
    return true;
  }
  return false;
}

async function dispatch(
  request: IncomingMessage,
  response: ServerResponse,
  configuredHost: string | undefined,
): Promise<void> {
  const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
  const method = (request.method ?? 'GET').toUpperCase();
  const clientRequestId = (request.headers['x-request-id'] as string | undefined)?.slice(0, 200);
  const requestId = clientRequestId || randomUUID();
  // API Gateway's own id of the request: the functions' `requestContext.requestId` and every answer's
  // `apigw-requestid` (the host's local-only surfaces, which the cloud has not, carry none).
  const gatewayId = gatewayRequestId();
  const receivedAt = Date.now();
  /** The id the functions log this request by (shared/http/endpoint.ts). */
  const loggedId = clientRequestId || gatewayId;
  if (requestHeadBytes(request) > GATEWAY_HEAD_BYTES) {
    // API Gateway refuses it before any route, function or local-only surface.
    request.resume();
    sendGatewayError(response, 431, 'Request Header Fields Too Large', gatewayId);
    return;
  }
  if (isLocalOnly(url.pathname)) {
    const refusal = localOnlyRefusal(request, configuredHost);
    if (refusal) {
      request.resume(); // whatever body it sent is read and dropped, so the connection stays usable
      sendLocalRefusal(response, refusal, requestId);
      return;
    }
    if (method === 'OPTIONS') {
      // No CORS: a browser's preflight for another origin fails here.
      send(response, 204, { 'X-Request-Id': requestId }, '');
      return;
    }
  }
  if (method === 'OPTIONS') {
    // API Gateway answers every OPTIONS itself (the API's CORS configuration, lib/stacks/api-stack.ts): no route, no
    // function, whatever the path.
    send(response, 204, { ...CORS_HEADERS, 'apigw-requestid': gatewayId }, '');
    return;
  }
  if (method === 'GET' && (await localRoute(url.pathname, url, response, requestId))) return;
  const management = /^(?:\/[^/]+)?\/@connections\/([^/]+)$/.exec(url.pathname);
  if (management) {
    const answer = gateway.manage(method, decodeURIComponent(management[1]!), await readBody(request));
    send(response, answer.status, { 'Content-Type': 'application/json', ...answer.headers }, answer.body ?? '');
    return;
  }
  const { route, params, malformed } = matchRoute(method, url.pathname);
  if (malformed) {
    sendProblem(response, invalidField('path', 'holds a malformed percent-encoding'), requestId, gatewayId);
    return;
  }
  if (!route) {
    sendProblem(response, noRouteProblem(method, url.pathname), requestId, gatewayId);
    return;
  }
  const incoming: IncomingRequest = {
    method,
    path: url.pathname,
    rawQueryString: url.search.slice(1),
    // Every value of a repeated header, joined with commas as API Gateway joins them (Node keeps the first
    // `Authorization` of two; API Gateway hands the authorizer both, and the joined value is no token). Nothing is
    // added that API Gateway does not add: an `X-Request-Id` is the client's, or absent.
    headers: request.headersDistinct,
    body: await readBody(request, bodyLimit(route)),
    routeKey: `${route.method} ${route.path}`,
    pathParameters: params ?? {},
    sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
    requestId: gatewayId,
    receivedAt,
  };
  let authorizerContext: Record<string, string> | undefined;
  if (route.access !== 'public') {
    // The authorizer's identity source is the Authorization header: without it (or empty), API Gateway answers its
    // own 401 and no function runs.
    const authorization = request.headers['authorization'];
    if (authorization === undefined || authorization.trim() === '') {
      sendGatewayError(response, 401, 'Unauthorized', gatewayId);
      return;
    }
    const authorizer = (await loadHandler('auth/authorizer')) as unknown as (
      e: unknown,
    ) => Promise<{ context: Record<string, string> }>;
    const authorized = await withinTimeout(timeoutMs('AUTHORIZER', AUTHORIZER_TIMEOUT_S), () =>
      asFunction('auth/authorizer', () => authorizer(authorizerEvent(incoming))),
    );
    if (authorized === TIMED_OUT) {
      sendGatewayError(response, 500, 'Internal Server Error', gatewayId);
      return;
    }
    authorizerContext = authorized.context;
  }
  const handler = await loadHandler(route.handler);
  const event = proxyEvent(incoming, authorizerContext);
  if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_PAYLOAD_BYTES) {
    // Lambda refuses the invocation (RequestEntityTooLarge) and API Gateway answers for the function.
    sendGatewayError(response, 500, 'Internal Server Error', gatewayId);
    return;
  }
  const limit = timeoutMs('FUNCTION', API_FUNCTION_TIMEOUT_S);
  const result = await withinTimeout(limit, () =>
    asFunction(route.handler, () => handler(event, lambdaContext(`dispatch-${route.area}`, limit))),
  );
  if (result === TIMED_OUT) {
    // Lambda ends the invocation at its timeout ("Task timed out") and API Gateway answers for it. In process the
    // handler cannot be stopped: it runs on, and whatever it answers is dropped.
    console.error(loggedId, `${route.handler}: timed out after ${limit} ms`);
    sendGatewayError(response, 500, 'Internal Server Error', gatewayId);
    return;
  }
  if (Buffer.byteLength(JSON.stringify(result)) > LAMBDA_PAYLOAD_BYTES) {
    // Lambda cannot deliver the function's answer; API Gateway reports an integration failure.
    console.error(loggedId, `${route.handler}: answer over Lambda's ${LAMBDA_PAYLOAD_BYTES} bytes`);
    sendGatewayError(response, 502, 'Internal Server Error', gatewayId);
    return;
  }
  writeResult(response, result, gatewayId);
}

const TIMED_OUT = Symbol('timed out');

/** `work`'s result, or TIMED_OUT once `ms` have passed without one. */
async function withinTimeout<T>(ms: number, work: () => Promise<T>): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([work(), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A function's time limit in milliseconds: its Lambda timeout, unless `LOCAL_<kind>_TIMEOUT_MS` sets a shorter one
 * (tests do, to see a timeout without waiting 29 s).
 */
function timeoutMs(kind: 'FUNCTION' | 'AUTHORIZER', seconds: number): number {
  const override = Number(process.env[`LOCAL_${kind}_TIMEOUT_MS`]);
  return Number.isFinite(override) && override > 0 ? override : seconds * 1000;
}

/**
 * Lambda's limit for a synchronous invocation's event and for its answer, each counted as the JSON it travels as
 * (a binary body base64-encoded, a JSON answer a string inside the result object).
 */
export const LAMBDA_PAYLOAD_BYTES = 6_291_556;

/** API Gateway's own answer, when it refuses before a function runs or the integration fails (not problem+json). */
function sendGatewayError(response: ServerResponse, status: number, message: string, gatewayId: string) {
  send(
    response,
    status,
    { ...CORS_HEADERS, 'Content-Type': 'application/json', 'apigw-requestid': gatewayId },
    JSON.stringify({ message }),
  );
}

/** `configuredHost`: the `HOST` the server listens on, accepted in a `Host` header besides IP addresses and localhost. */
export function createHostServer(configuredHost?: string): Server {
  const server = createServer({ maxHeaderSize: PARSER_HEAD_BYTES }, (request, response) => {
    dispatch(request, response, configuredHost).catch((error: unknown) => {
      const requestId = randomUUID();
      const problem = (error as Problem).status ? (error as Problem) : internal();
      if (problem.status === 500) console.error(requestId, error);
      // A body refused part-way (413) may still be arriving: the answer closes the connection, so that no client
      // sends its next request on a socket whose last body was never read to its end.
      if (problem.status === 413) response.shouldKeepAlive = false;
      if (!response.headersSent) sendProblem(response, problem, requestId);
      else response.end();
    });
  });
  gateway.attach(server);
  return server;
}
