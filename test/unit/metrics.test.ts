/** Every request through the handler factory publishes its operation's metrics as CloudWatch EMF. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RouteDef } from '../../shared/routes.ts';

afterEach(() => {
  vi.restoreAllMocks();
  process.env['POWERTOOLS_METRICS_DISABLED'] = 'true';
  vi.resetModules();
});

async function emfLinesOf(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  await run();
  vi.restoreAllMocks();
  return lines
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

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
