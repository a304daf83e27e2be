/** Every request through the handler factory publishes its operation's metrics as CloudWatch EMF. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { toAuthorizerContext } from '../../shared/auth/authorizer-context.ts';
import type { RouteDef } from '../../shared/routes.ts';

afterEach(() => {
  vi.restoreAllMocks();
  process.env['POWERTOOLS_METRICS_DISABLED'] = 'true';
  vi.resetModules();
});

/** The JSON lines `run` writes to stdout (the logger's and the metrics' EMF lines), as written. */
async function rawLinesOf(run: () => Promise<unknown>): Promise<string[]> {
  const chunks: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  await run();
  vi.restoreAllMocks();
  return chunks.flatMap((chunk) => chunk.split('\n')).filter((line) => line.startsWith('{'));
}

const linesOf = async (run: () => Promise<unknown>) =>
  (await rawLinesOf(run)).map((line) => JSON.parse(line) as Record<string, unknown>);

const emfLinesOf = async (run: () => Promise<unknown>) => (await linesOf(run)).filter((line) => '_aws' in line);

describe('request metrics', () => {
  it('count requests, client errors and latency per operation', async () => {
    process.env['POWERTOOLS_METRICS_DISABLED'] = 'false';
    vi.resetModules();
    const { endpoint } = await import('../../shared/http/endpoint.ts');
    const route: RouteDef = {
      id: 'T0',
      method: 'GET',
      path: '/v1/test',
      area: 'auth',
      handler: 'auth/test',
      needs: {},
      access: 'users',
      summary: 'test',
      status: 200,
    };
    const handler = endpoint([route], 'T0', async () => ({ status: 200, body: {} }));
    const [refused] = await emfLinesOf(() =>
      handler({ rawPath: '/v1/test', headers: {}, requestContext: { http: { method: 'GET' } } } as never),
    );
    expect(refused).toMatchObject({ operation: 'T0', service: 'dispatch', ClientErrors: 1 });
    expect(refused!['Latency']).toEqual(expect.any(Number));
    // No `Requests` metric: the request count is Latency's SampleCount (one sample a request).
    expect(Object.keys(refused!)).not.toContain('Requests');
    const directive = (refused!['_aws'] as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] })
      .CloudWatchMetrics[0]!;
    expect(directive.Namespace).toBe('Dispatch');
    expect(directive.Dimensions[0]).toEqual(expect.arrayContaining(['operation', 'service']));
  });

  it('stay off where POWERTOOLS_METRICS_DISABLED says so (local mode and the tests)', async () => {
    vi.resetModules();
    const { recordRequest } = await import('../../shared/metrics.ts');
    expect(await emfLinesOf(async () => recordRequest('A1', 200, 3))).toEqual([]);
  });
});

describe('one log line a successful request (issue 27.4)', () => {
  // The tests run the logger SILENT (vitest.config.ts); these read its lines.
  beforeEach(() => {
    process.env['LOG_LEVEL'] = 'INFO';
  });
  afterEach(() => {
    process.env['LOG_LEVEL'] = 'SILENT';
  });
  const route = (access: RouteDef['access']): RouteDef => ({
    id: 'T0',
    method: 'GET',
    path: '/v1/test',
    area: 'auth',
    handler: 'auth/test',
    needs: {},
    access,
    summary: 'test',
    status: 200,
  });
  const event = {
    rawPath: '/v1/test',
    headers: { 'x-request-id': 'req-27-4' },
    requestContext: { http: { method: 'GET' } },
  } as never;

  it('writes a success as its EMF line alone, with the request details the request line had', async () => {
    process.env['POWERTOOLS_METRICS_DISABLED'] = 'false';
    vi.resetModules();
    const { endpoint } = await import('../../shared/http/endpoint.ts');
    const handler = endpoint([route('public')], 'T0', async () => ({ status: 200, body: {} }));
    const lines = await linesOf(() => handler(event, {} as never));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      _aws: expect.any(Object),
      operation: 'T0',
      Latency: expect.any(Number),
      RCU: 0,
      WCU: 0,
      request_id: 'req-27-4',
      status: '200',
      ddb_calls: '0',
    });
  });

  it("answers and logs API Gateway's request id when the caller sends none (the access log's requestId)", async () => {
    vi.resetModules();
    const { endpoint } = await import('../../shared/http/endpoint.ts');
    const handler = endpoint([route('public')], 'T0', async () => ({ status: 200, body: {} }));
    const answer = (await handler(
      {
        rawPath: '/v1/test',
        headers: {},
        requestContext: { http: { method: 'GET' }, requestId: 'Fx1Ab2cDoAMEb0A=' },
      } as never,
      {} as never,
    )) as { headers: Record<string, string> };
    expect(answer.headers['X-Request-Id']).toBe('Fx1Ab2cDoAMEb0A=');
    // The caller's own id still wins.
    const echoed = (await handler(
      { ...(event as object), requestContext: { http: { method: 'GET' }, requestId: 'Fx1Ab2cDoAMEb0A=' } } as never,
      {} as never,
    )) as { headers: Record<string, string> };
    expect(echoed.headers['X-Request-Id']).toBe('req-27-4');
  });

  it('writes the request line as well for an error answer, and alone where metrics are off', async () => {
    process.env['POWERTOOLS_METRICS_DISABLED'] = 'false';
    vi.resetModules();
    const refused = await (async () => {
      const { endpoint } = await import('../../shared/http/endpoint.ts');
      return linesOf(() =>
        endpoint([route('users')], 'T0', async () => ({ status: 200, body: {} }))(event, {} as never),
      );
    })();
    expect(refused.map((line) => (line['_aws'] ? 'emf' : line['message']))).toEqual(['request', 'emf']);
    expect(refused[0]).toMatchObject({ status: 401, request_id: 'req-27-4', method: 'GET', path: '/v1/test' });
    // The EMF line links to the request line by its id and repeats none of its details.
    const { _aws, operation, service, ClientErrors, Latency, RCU, WCU, ...details } = refused[1]!;
    expect({ operation, service, ClientErrors, Latency, RCU, WCU }).toMatchObject({ operation: 'T0', ClientErrors: 1 });
    expect(details).toEqual({ request_id: 'req-27-4' });
    process.env['POWERTOOLS_METRICS_DISABLED'] = 'true';
    vi.resetModules();
    const { endpoint } = await import('../../shared/http/endpoint.ts');
    const local = await linesOf(() =>
      endpoint([route('public')], 'T0', async () => ({ status: 200, body: {} }))(event, {} as never),
    );
    expect(local.map((line) => line['message'])).toEqual(['request']);
  });
});

describe('the EMF line of a typical success (docs/monitoring.md, "The EMF line")', () => {
  // Lambda sets the trace header per invocation; the logger's lines carry its Root as `xray_trace_id`.
  const TRACE = 'Root=1-6743a1f2-5e8b3c1d9a7f4e2b6c0d8a13;Parent=53995c3f42cd8ad8;Sampled=1';
  beforeEach(() => {
    process.env['_X_AMZN_TRACE_ID'] = TRACE;
    process.env['POWERTOOLS_METRICS_DISABLED'] = 'false';
    vi.resetModules();
  });
  afterEach(() => {
    delete process.env['_X_AMZN_TRACE_ID'];
  });
  const driver = toAuthorizerContext({
    kind: 'user',
    id: '5f9c2d7e-8a41-4b3c-9e6f-1d2a3b4c5d6e',
    roles: ['Driver'],
    orgId: '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0',
  });
  const x13 = {
    rawPath: '/v1/driver/locations',
    headers: { 'content-type': 'application/json', 'x-request-id': 'c0a8f1e2-4b6d-4e8f-9a1b-2c3d4e5f6a7b' },
    body: JSON.stringify({ fixes: [{ latitude: 52.37, longitude: 4.89, client_time_utc: '2026-11-24T20:00:00Z' }] }),
    requestContext: { http: { method: 'POST' }, authorizer: { lambda: driver } },
  };

  it('is one line of at most 500 bytes (bench/cost-model.ts) with everything an operator searches by', async () => {
    const { endpoint } = await import('../../shared/http/endpoint.ts');
    const { locationsRoutes } = await import('../../shared/routes/locations.ts');
    const handler = endpoint(locationsRoutes, 'X13', async () => ({ status: 200, body: { stored: 1, ignored: 0 } }));
    const [line, ...others] = await rawLinesOf(() => handler(x13 as never, {} as never));
    expect(others).toEqual([]);
    // Measured: 588 bytes before (with `Requests`, method and path, long capacity names, and no trace id).
    expect(Buffer.byteLength(line!)).toBeLessThanOrEqual(500);
    const emf = JSON.parse(line!) as Record<string, unknown>;
    expect(emf).toMatchObject({
      request_id: 'c0a8f1e2-4b6d-4e8f-9a1b-2c3d4e5f6a7b',
      operation: 'X13',
      status: '200',
      caller_id: '5f9c2d7e-8a41-4b3c-9e6f-1d2a3b4c5d6e',
      ddb_calls: '0',
      Latency: expect.any(Number),
      xray_trace_id: '1-6743a1f2-5e8b3c1d9a7f4e2b6c0d8a13',
    });
    // The operation says the method, and the path of a route without parameters.
    expect(Object.keys(emf)).not.toContain('method');
    expect(Object.keys(emf)).not.toContain('path');
  });

  it('keeps the path where the route has parameters: it holds the ids an operator looks for', async () => {
    const { endpoint } = await import('../../shared/http/endpoint.ts');
    const { locationsRoutes } = await import('../../shared/routes/locations.ts');
    const handler = endpoint(locationsRoutes, 'L2', async () => ({ status: 200, body: {} }));
    const path = '/v1/driver-locations/5f9c2d7e-8a41-4b3c-9e6f-1d2a3b4c5d6e';
    const lines = await linesOf(() =>
      handler(
        {
          ...x13,
          rawPath: path,
          body: undefined,
          pathParameters: { driver_id: '5f9c2d7e-8a41-4b3c-9e6f-1d2a3b4c5d6e' },
        } as never,
        {} as never,
      ),
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ operation: 'L2', status: '200', path });
  });
});
