/** Every request through the handler factory publishes its operation's metrics as CloudWatch EMF. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RouteDef } from '../../shared/routes.ts';

afterEach(() => {
  vi.restoreAllMocks();
  process.env['POWERTOOLS_METRICS_DISABLED'] = 'true';
  vi.resetModules();
});

/** The JSON lines `run` writes to stdout (the logger's and the metrics' EMF lines). */
async function linesOf(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const chunks: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  await run();
  vi.restoreAllMocks();
  return chunks
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

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
    expect(refused).toMatchObject({ operation: 'T0', service: 'dispatch', Requests: 1, ClientErrors: 1 });
    expect(refused!['Latency']).toEqual(expect.any(Number));
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
      Requests: 1,
      request_id: 'req-27-4',
      method: 'GET',
      path: '/v1/test',
      status: '200',
      ddb_calls: '0',
    });
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
    expect(refused[0]).toMatchObject({ status: 401, request_id: 'req-27-4' });
    process.env['POWERTOOLS_METRICS_DISABLED'] = 'true';
    vi.resetModules();
    const { endpoint } = await import('../../shared/http/endpoint.ts');
    const local = await linesOf(() =>
      endpoint([route('public')], 'T0', async () => ({ status: 200, body: {} }))(event, {} as never),
    );
    expect(local.map((line) => line['message'])).toEqual(['request']);
  });
});
