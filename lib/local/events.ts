/**
 * Builds the events API Gateway (HTTP API, payload 2.0) would send: the authorizer's REQUEST event and the
 * integration's proxy event, so the handlers run locally exactly as deployed.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
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
}

const TEXT_TYPES = /^(application\/(json|.*\+json|x-www-form-urlencoded|xml)|text\/)/i;

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  return out;
}

/** Repeated query parameters are joined with commas, as API Gateway does. */
function queryParameters(raw: string): Record<string, string> | undefined {
  if (!raw) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(raw)) out[name] = name in out ? `${out[name]},${value}` : value;
  return out;
}

function requestContext(request: IncomingRequest, headers: Record<string, string>) {
  const now = Date.now();
  return {
    accountId: 'local',
    apiId: 'local',
    domainName: headers['host'] ?? 'localhost',
    domainPrefix: 'localhost',
    http: {
      method: request.method,
      path: request.path,
      protocol: 'HTTP/1.1',
      sourceIp: request.sourceIp,
      userAgent: headers['user-agent'] ?? '',
    },
    requestId: randomUUID(),
    routeKey: request.routeKey,
    stage: '$default',
    time: new Date(now).toUTCString(),
    timeEpoch: now,
  };
}

export function authorizerEvent(request: IncomingRequest): APIGatewayRequestAuthorizerEventV2 {
  const headers = flattenHeaders(request.headers);
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:local:local:local/$default/${request.method}${request.path}`,
    identitySource: headers['authorization'] ? [headers['authorization']] : [],
    routeKey: request.routeKey,
    rawPath: request.path,
    rawQueryString: request.rawQueryString,
    cookies: [],
    headers,
    queryStringParameters: queryParameters(request.rawQueryString) ?? {},
    requestContext: requestContext(request, headers),
    pathParameters: request.pathParameters,
    stageVariables: {},
  } as unknown as APIGatewayRequestAuthorizerEventV2;
}

export function proxyEvent(
  request: IncomingRequest,
  authorizerContext: Record<string, string> | undefined,
): APIGatewayProxyEventV2 {
  const headers = flattenHeaders(request.headers);
  const isText = request.body.length === 0 || TEXT_TYPES.test(headers['content-type'] ?? 'application/json');
  return {
    version: '2.0',
    routeKey: request.routeKey,
    rawPath: request.path,
    rawQueryString: request.rawQueryString,
    headers,
    queryStringParameters: queryParameters(request.rawQueryString),
    pathParameters: Object.keys(request.pathParameters).length > 0 ? request.pathParameters : undefined,
    requestContext: {
      ...requestContext(request, headers),
      ...(authorizerContext ? { authorizer: { lambda: authorizerContext } } : {}),
    },
    body: request.body.length === 0 ? undefined : request.body.toString(isText ? 'utf8' : 'base64'),
    isBase64Encoded: !isText,
  } as APIGatewayProxyEventV2;
}

export function lambdaContext(functionName: string, timeoutMs = 29_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
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
