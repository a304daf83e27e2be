/**
 * The access-log lines of the HTTP API and the WebSocket stage (lib/stacks/api-stack.ts, realtime-stack.ts): what
 * an on-call operator reads in them, nothing twice, and the bytes of a typical line, which bench/cost-model.ts
 * prices for every request (docs/monitoring.md, "The HTTP API's access log").
 */
import { describe, expect, it } from 'vitest';
import { FLEET } from '../../bench/cost-model.ts';
import { HTTP_ACCESS_LOG_FORMAT } from '../../lib/stacks/api-stack.ts';
import { WEBSOCKET_ACCESS_LOG_FORMAT } from '../../lib/stacks/realtime-stack.ts';

/** A line as API Gateway writes it: each `$context` variable replaced by its value, `-` where it has none. */
function render(format: string, values: Record<string, string>): string {
  return format.replace(/\$context\.[A-Za-z.]+/g, (variable) => {
    const value = values[variable.slice('$context.'.length)] ?? '-';
    return JSON.stringify(value).slice(1, -1);
  });
}

/** An X13 success from a driver's phone, the authorizer's answer cached (no authorizer run: no latency, no error). */
const X13_FROM_A_PHONE: Record<string, string> = {
  requestId: 'JkF2ciV_IAMEVfg=',
  extendedRequestId: 'JkF2ciV_IAMEVfg=',
  'identity.sourceIp': '203.0.113.45',
  'identity.userAgent':
    'Mozilla/5.0 (Linux; Android 14; SM-A546B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.135 Mobile Safari/537.36',
  requestTime: '24/Nov/2026:20:40:32 +0000',
  requestTimeEpoch: '1795552832343',
  httpMethod: 'POST',
  path: '/v1/driver/locations',
  routeKey: 'POST /v1/driver/locations',
  protocol: 'HTTP/1.1',
  status: '200',
  responseLength: '27',
  responseLatency: '46',
  integrationStatus: '200',
  integrationLatency: '41',
  'authorizer.status': '200',
};

describe('the HTTP API access log', () => {
  const fields = JSON.parse(HTTP_ACCESS_LOG_FORMAT) as Record<string, string>;

  it('keeps what an operator reads: request, caller address and agent, route, path, status, latencies, errors', () => {
    expect(Object.values(fields).sort()).toEqual(
      [
        '$context.requestId',
        '$context.requestTimeEpoch',
        '$context.identity.sourceIp',
        '$context.identity.userAgent',
        '$context.httpMethod',
        '$context.routeKey',
        // The path holds the ids of a route with parameters (the route key has only `{driver_id}`).
        '$context.path',
        '$context.status',
        '$context.responseLatency',
        '$context.integrationStatus',
        '$context.integrationLatency',
        '$context.integrationErrorMessage',
        '$context.authorizer.status',
        '$context.authorizer.error',
        '$context.error.responseType',
      ].sort(),
    );
  });

  it('writes nothing twice: no formatted time beside the epoch, no extended id (the request id in HTTP APIs)', () => {
    for (const dropped of [
      '$context.requestTime',
      '$context.extendedRequestId',
      '$context.protocol',
      '$context.responseLength',
      '$context.authorizer.latency',
      '$context.error.message',
    ]) {
      expect(Object.values(fields), dropped).not.toContain(dropped);
    }
    expect(new Set(Object.values(fields)).size).toBe(Object.keys(fields).length);
  });

  it('writes a typical X13 success from a phone in at most the bytes the cost model prices (was 666)', () => {
    const line = render(HTTP_ACCESS_LOG_FORMAT, X13_FROM_A_PHONE);
    expect(JSON.parse(line)).toMatchObject({ requestId: 'JkF2ciV_IAMEVfg=', route: 'POST /v1/driver/locations' });
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(FLEET.accessLogBytesPerRequest);
  });
});

describe('the WebSocket access log', () => {
  it('says the connection, the route (which says the event type), the request and its status', () => {
    expect(Object.values(JSON.parse(WEBSOCKET_ACCESS_LOG_FORMAT) as Record<string, string>)).toEqual([
      '$context.requestId',
      '$context.connectionId',
      '$context.routeKey',
      '$context.status',
    ]);
  });
});
