/**
 * Builds the events API Gateway (HTTP API, payload 2.0) would send: the authorizer's REQUEST event and the
 * integration's proxy event, so the handlers run locally exactly as deployed. Held to AWS's documented example event
 * by test/unit/local-events.test.ts; what still differs, and why, is listed in docs/local-mode.md.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIPv4 } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayRequestAuthorizerEventV2, Context } from 'aws-lambda';

export interface IncomingRequest {
  method: string;
  path: string;
  rawQueryString: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  routeKey: string;
  pathParameters: Record<string, string>;
  sourceIp: string;
  /** API Gateway's id of the request (`requestContext.requestId`, the `apigw-requestid` header); made when missing. */
  requestId?: string;
  /** When it arrived (epoch ms): `requestContext.time` and `timeEpoch`; now when missing. */
  receivedAt?: number;
}

/** Bodies passed as text; any other (form posts and multipart included, as API Gateway does) is base64-encoded. */
const TEXT_TYPES = /^(application\/(json|.*\+json|xml)|text\/)/i;

/** The account id in every local ARN and event (Lambda's context uses the same). */
export const LOCAL_ACCOUNT_ID = '000000000000';
const LOCAL_API_ID = 'local';

/** An id in the shape of API Gateway's own (`JKJaXmPLvHcESHA=`: 11 random bytes, base64). */
export const gatewayRequestId = () => randomBytes(11).toString('base64');

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** API Gateway's `requestContext.time`: the access-log (CLF) format in UTC, `12/Mar/2020:19:03:58 +0000`. */
export function gatewayTime(epochMs: number): string {
  const d = new Date(epochMs);
  return (
    `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`
  );
}

/** `::ffff:127.0.0.1` (an IPv4 client on a dual-stack socket) is `127.0.0.1`, as API Gateway reports it. */
function clientAddress(address: string): string {
  const mapped = /^::ffff:(.+)$/i.exec(address);
  return mapped && isIPv4(mapped[1]!) ? mapped[1]! : address;
}

/** The `Host` header as a URL's host and port; `localhost` for none or one that is no authority. */
function authorityOf(host: string | undefined): URL {
  try {
    return new URL(`http://${host ?? 'localhost'}`);
  } catch {
    return new URL('http://localhost');
  }
}

interface GatewayView {
  headers: Record<string, string>;
  cookies: string[];
  requestContext: Record<string, unknown>;
}

/**
 * What API Gateway makes of a request, once per request (the authorizer's event and the function's share the same
 * id, time and trace id): header names lower case and repeated values joined with commas; every `Cookie` header
 * taken out of the headers into `cookies`, one entry a cookie; the headers API Gateway adds (`x-forwarded-*`,
 * `x-amzn-trace-id`); the request context.
 */
const views = new WeakMap<IncomingRequest, GatewayView>();
function gatewayView(request: IncomingRequest): GatewayView {
  const known = views.get(request);
  if (known) return known;
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    if (name.toLowerCase() === 'cookie') {
      for (const cookie of values.flatMap((v) => v.split(';'))) if (cookie.trim()) cookies.push(cookie.trim());
    } else headers[name.toLowerCase()] = values.join(',');
  }
  const receivedAt = request.receivedAt ?? Date.now();
  const sourceIp = clientAddress(request.sourceIp);
  const authority = authorityOf(headers['host']);
  headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${sourceIp}` : sourceIp;
  // The local host speaks plain HTTP on its own port; API Gateway says `https` and `443`.
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-port'] = authority.port || '80';
  headers['x-amzn-trace-id'] ??=
    `Root=1-${Math.floor(receivedAt / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
  const domainName = authority.hostname.replace(/^\[|\]$/g, '');
  const view: GatewayView = {
    headers,
    cookies,
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: LOCAL_API_ID,
      domainName,
      domainPrefix: domainName.split('.')[0]!,
      http: {
        method: request.method,
        path: request.path,
        protocol: 'HTTP/1.1',
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: request.requestId ?? gatewayRequestId(),
      routeKey: request.routeKey,
      stage: '$default',
      time: gatewayTime(receivedAt),
      timeEpoch: receivedAt,
    },
  };
  views.set(request, view);
  return view;
}

/** Repeated query parameters are joined with commas, as API Gateway does; none: no member at all. */
function queryParameters(raw: string): Record<string, string> | undefined {
  if (!raw) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(raw)) out[name] = name in out ? `${out[name]},${value}` : value;
  return out;
}

/** The members API Gateway leaves out when the request has none of them. */
function optionalMembers(request: IncomingRequest, view: GatewayView) {
  return {
    ...(view.cookies.length > 0 ? { cookies: view.cookies } : {}),
    ...(request.rawQueryString ? { queryStringParameters: queryParameters(request.rawQueryString) } : {}),
    ...(Object.keys(request.pathParameters).length > 0 ? { pathParameters: request.pathParameters } : {}),
  };
}

export function authorizerEvent(request: IncomingRequest): APIGatewayRequestAuthorizerEventV2 {
  const view = gatewayView(request);
  const region = process.env['AWS_REGION'] ?? 'us-east-1';
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:${region}:${LOCAL_ACCOUNT_ID}:${LOCAL_API_ID}/$default/${request.method}${request.path}`,
    identitySource: view.headers['authorization'] ? [view.headers['authorization']] : [],
    routeKey: request.routeKey,
    rawPath: request.path,
    rawQueryString: request.rawQueryString,
    headers: view.headers,
    requestContext: view.requestContext,
    ...optionalMembers(request, view),
  } as unknown as APIGatewayRequestAuthorizerEventV2;
}

export function proxyEvent(
  request: IncomingRequest,
  authorizerContext: Record<string, string> | undefined,
): APIGatewayProxyEventV2 {
  const view = gatewayView(request);
  const hasBody = request.body.length > 0;
  const isText = !hasBody || TEXT_TYPES.test(view.headers['content-type'] ?? 'application/json');
  return {
    version: '2.0',
    routeKey: request.routeKey,
    rawPath: request.path,
    rawQueryString: request.rawQueryString,
    headers: view.headers,
    requestContext: {
      ...view.requestContext,
      ...(authorizerContext ? { authorizer: { lambda: authorizerContext } } : {}),
    },
    ...(hasBody ? { body: request.body.toString(isText ? 'utf8' : 'base64') } : {}),
    isBase64Encoded: !isText,
    ...optionalMembers(request, view),
  } as APIGatewayProxyEventV2;
}

export function lambdaContext(functionName: string, timeoutMs = 29_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
