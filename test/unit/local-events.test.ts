/**
 * The local host's event builder (lib/local/events.ts) is held to AWS's documented payload-format-2.0 event
 * (test/fixtures/api-gateway-http-v2-event.ts): the same request builds an event with the same members at every
 * level, of the same types and formats; only what must differ (ids, the account, times) may, and only the members
 * this API cannot receive (mutual TLS, a JWT authorizer, stage variables) are absent. Issue 35 item 13.
 */
import { describe, expect, it } from 'vitest';
import { authorizerEvent, type IncomingRequest, proxyEvent } from '../../lib/local/events.ts';
import {
  apiGatewayHttpV2Event,
  HEADERS_API_GATEWAY_ADDS,
  RECORDED_REQUEST_ID,
} from '../fixtures/api-gateway-http-v2-event.ts';

/** The documented example's request, as it reaches the local host. */
const documentedRequest = (): IncomingRequest => ({
  method: 'POST',
  path: '/my/path',
  rawQueryString: 'parameter1=value1&parameter1=value2&parameter2=value',
  headers: {
    header1: 'value1',
    header2: ['value1', 'value2'],
    cookie: 'cookie1; cookie2',
    // Every real request carries these two; the example leaves them out of `headers` but shows their values in
    // `domainName` and `http.userAgent`.
    host: 'id.execute-api.us-east-1.amazonaws.com',
    'user-agent': 'agent',
  },
  body: Buffer.from('Hello from Lambda'),
  routeKey: '$default',
  pathParameters: { parameter1: 'value1' },
  sourceIp: '::ffff:192.0.2.1',
  receivedAt: apiGatewayHttpV2Event.requestContext.timeEpoch,
});

/** Members of the example this API never receives, and why. */
const ABSENT_HERE: Record<string, string> = {
  'requestContext.authentication': 'mutual TLS only; the API has none',
  'requestContext.authorizer.jwt': 'a JWT authorizer; ours is a Lambda authorizer (`authorizer.lambda`)',
  stageVariables: 'the API defines no stage variables',
};

/** Members only this API's events have: the Lambda authorizer's context, in the place the guide documents for it. */
const ONLY_HERE: Record<string, string> = {
  'requestContext.authorizer.lambda': 'the Lambda authorizer’s context (the example shows a JWT authorizer’s claims)',
};

/** Values that must differ, each held to the format the recorded events show. */
const FORMATS: Record<string, RegExp> = {
  'requestContext.accountId': /^\d{12}$/,
  'requestContext.apiId': /^[a-z0-9-]+$/,
  'requestContext.requestId': /^[A-Za-z0-9+/]{15}=$/,
  'requestContext.time': /^\d{2}\/(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/,
  'requestContext.timeEpoch': /^\d{13}$/,
};

/** Every difference between `recorded` and `built`, by path: members, types, and values outside FORMATS. */
function differences(recorded: unknown, built: unknown, path = ''): string[] {
  if (path in ABSENT_HERE) return built === undefined ? [] : [`${path}: present, but ${ABSENT_HERE[path]}`];
  if (typeof recorded !== typeof built || Array.isArray(recorded) !== Array.isArray(built)) {
    return [`${path}: ${JSON.stringify(recorded)} recorded, ${JSON.stringify(built)} built`];
  }
  if (recorded !== null && typeof recorded === 'object' && !Array.isArray(recorded)) {
    const a = recorded as Record<string, unknown>;
    const b = built as Record<string, unknown>;
    const names = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...names].flatMap((name) => {
      const at = path ? `${path}.${name}` : name;
      if (!(name in b) && !(at in ABSENT_HERE)) return [`${at}: missing`];
      if (!(name in a)) return at in ONLY_HERE ? [] : [`${at}: not in the recorded event`];
      return differences(a[name], b[name], at);
    });
  }
  const format = FORMATS[path];
  if (format) return format.test(String(built)) ? [] : [`${path}: ${JSON.stringify(built)} is not like the recorded`];
  return JSON.stringify(recorded) === JSON.stringify(built)
    ? []
    : [`${path}: ${JSON.stringify(recorded)} recorded, ${JSON.stringify(built)} built`];
}

describe('the local event builder against the documented payload-format-2.0 event', () => {
  it('builds the same event for the same request: members, types, formats and values', () => {
    const claims = apiGatewayHttpV2Event.requestContext.authorizer.jwt.claims;
    const built = proxyEvent(documentedRequest(), claims) as unknown as Record<string, unknown>;
    // The headers API Gateway adds are in every real event and not in the example: held to the recorded ones' form.
    const headers = { ...(built['headers'] as Record<string, string>) };
    expect(Object.keys(HEADERS_API_GATEWAY_ADDS).every((name) => name in headers)).toBe(true);
    expect(headers['x-amzn-trace-id']).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24}$/);
    expect(HEADERS_API_GATEWAY_ADDS['x-amzn-trace-id']).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-z]{24}$/);
    expect(headers['x-forwarded-for']).toBe('192.0.2.1');
    // Plain HTTP locally, on the Host's port (none given: 80); API Gateway says `https` and `443`.
    expect(headers['x-forwarded-proto']).toBe('http');
    expect(headers['x-forwarded-port']).toBe('80');
    for (const name of [...Object.keys(HEADERS_API_GATEWAY_ADDS), 'host', 'user-agent']) delete headers[name];

    expect(differences(apiGatewayHttpV2Event, { ...built, headers })).toEqual([]);
    expect(FORMATS['requestContext.requestId']!.test(RECORDED_REQUEST_ID)).toBe(true);
    // The request's arrival, in API Gateway's access-log form (the example's own `time` names another day).
    expect((built['requestContext'] as { time: string }).time).toBe('04/Mar/2020:19:03:58 +0000');
  });

  it('puts the Lambda authorizer’s context under requestContext.authorizer.lambda', () => {
    const context = { principal: 'user#u-1', roles: 'OrgAdmin' };
    const built = proxyEvent(documentedRequest(), context);
    expect((built.requestContext as { authorizer?: unknown }).authorizer).toEqual({ lambda: context });
  });

  it('gives the authorizer and the function one request: the same id, time, headers and cookies', () => {
    const request = documentedRequest();
    const authorizer = authorizerEvent(request);
    const proxy = proxyEvent(request, undefined);
    expect(authorizer.requestContext).toEqual(proxy.requestContext);
    expect(authorizer.headers).toEqual(proxy.headers);
    expect(authorizer.cookies).toEqual(['cookie1', 'cookie2']);
    expect(authorizer.routeArn).toMatch(/^arn:aws:execute-api:[a-z0-9-]+:\d{12}:[a-z0-9]+\/\$default\/POST\/my\/path$/);
  });

  it('leaves out what the request has none of: cookies, query, path parameters, body', () => {
    const built = proxyEvent(
      {
        ...documentedRequest(),
        headers: { host: 'localhost:3000' },
        rawQueryString: '',
        pathParameters: {},
        body: Buffer.alloc(0),
      },
      undefined,
    ) as unknown as Record<string, unknown>;
    for (const member of ['cookies', 'queryStringParameters', 'pathParameters', 'body', 'stageVariables']) {
      expect(built, member).not.toHaveProperty(member);
    }
    expect(built).toMatchObject({ rawQueryString: '', isBase64Encoded: false });
    expect(built['headers']).not.toHaveProperty('cookie');
    expect(built['requestContext']).toMatchObject({ domainName: 'localhost', domainPrefix: 'localhost' });
    expect((built['headers'] as Record<string, string>)['x-forwarded-port']).toBe('3000');
  });

  it('passes a form body base64-encoded, as API Gateway does, and JSON and text as they are', () => {
    const body = (type: string, text: string) =>
      proxyEvent({ ...documentedRequest(), headers: { 'content-type': type }, body: Buffer.from(text) }, undefined);
    const form = body('application/x-www-form-urlencoded', 'grant_type=client_credentials&client_id=a%2Bb');
    expect(form.isBase64Encoded).toBe(true);
    expect(Buffer.from(form.body!, 'base64').toString('utf8')).toBe('grant_type=client_credentials&client_id=a%2Bb');
    const json = body('application/json; charset=utf-8', '{"a":1}');
    expect(json).toMatchObject({ isBase64Encoded: false, body: '{"a":1}' });
    const text = body('text/csv', 'a,b\n1,2\n');
    expect(text).toMatchObject({ isBase64Encoded: false, body: 'a,b\n1,2\n' });
  });

  it('reports an IPv6 client as it is, and an IPv4 one on a dual-stack socket without the ::ffff: prefix', () => {
    expect(proxyEvent({ ...documentedRequest(), sourceIp: '::1' }, undefined).requestContext.http.sourceIp).toBe('::1');
    expect(proxyEvent(documentedRequest(), undefined).requestContext.http.sourceIp).toBe('192.0.2.1');
  });
});
