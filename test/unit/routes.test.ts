import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLING } from '../../lib/constructs/dispatch-function.ts';
import { matchRoute } from '../../lib/local/host.ts';
import { openApiDocument } from '../../lib/openapi.ts';
import { type RouteDef, routes } from '../../shared/routes.ts';
import { apiGatewayHttpV2Event } from '../fixtures/api-gateway-http-v2-event.ts';

const table = routes as readonly RouteDef[];

describe('the route table', () => {
  it('has unique ids and unique method + path pairs', () => {
    expect(new Set(table.map((r) => r.id)).size).toBe(table.length);
    expect(new Set(table.map((r) => `${r.method} ${r.path}`)).size).toBe(table.length);
  });

  it('points every route at a handler file that exists', () => {
    for (const route of table) expect(existsSync(`functions/${route.handler}.ts`), route.handler).toBe(true);
  });

  it('puts every operation but the well-known keys under /v1', () => {
    for (const route of table.filter((r) => r.id !== 'JWKS')) expect(route.path.startsWith('/v1/')).toBe(true);
  });

  it('is what the local host routes by, parameters decoded', () => {
    const match = matchRoute('GET', '/v1/admin/organisations/abc%20def');
    expect(match.route?.id).toBe('X3.read');
    expect(match.params).toEqual({ orgID: 'abc def' });
    expect(matchRoute('DELETE', '/v1/roles')).toEqual({
      route: undefined,
      pathMatched: true,
      allowed: ['GET'],
    });
  });

  it('is what the OpenAPI document describes, one operation per route with its spec id', () => {
    const document = openApiDocument();
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods)) as {
      'x-spec-id': string;
    }[];
    expect(operations.map((op) => op['x-spec-id']).sort()).toEqual(table.map((r) => r.specId ?? r.id).sort());
  });
});

describe('the spec numbers in the OpenAPI document', () => {
  const operations = () =>
    Object.entries(openApiDocument().paths).flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, { 'x-spec-id': string; operationId: string }>).map(
        ([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, ...operation }),
      ),
    );

  it('carry the contract’s own number on each of its paths (X3 and X7 list two), operationIds unique', () => {
    const byKey = new Map(operations().map((operation) => [operation.key, operation['x-spec-id']]));
    expect(byKey.get('GET /v1/admin/organisations')).toBe('X3');
    expect(byKey.get('GET /v1/admin/organisations/{orgID}')).toBe('X3');
    expect(byKey.get('POST /v1/admin/clients')).toBe('X7');
    expect(byKey.get('GET /v1/admin/clients')).toBe('X7');
    const ids = operations().map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('give an extension the contract does not number its own id, and no listed number a suffix', () => {
    // The contract's tables number every operation they list; these paths are the service's own additions.
    const extensions = ['X7.revoke', 'T6.deliveries', 'T6.own-deliveries', 'T6.test'];
    const suffixed = operations()
      .map((operation) => operation['x-spec-id'])
      .filter((id) => id.includes('.'));
    expect(suffixed.sort()).toEqual([...extensions].sort());
  });
});

describe('the function bundles', () => {
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
    );

  it('name their own area’s route table, so a function carries only that area’s schemas', () => {
    for (const file of sources('functions')) {
      const text = readFileSync(file, 'utf8');
      const used = /endpoint\((\w+)Routes, '([^']+)'/.exec(text);
      if (!used) continue;
      const route = table.find((candidate) => candidate.id === used[2]);
      expect(route?.area, file).toBe(used[1]);
      expect(text, file).not.toContain("from '#shared/routes'");
    }
  });

  it('load only external packages with import(): a bundled one would make esbuild wrap the SDK and keep all of it', () => {
    const external = new Set(BUNDLING!.externalModules);
    for (const file of [...sources('functions'), ...sources('shared')]) {
      for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/(?<!typeof )\bimport\(\s*'([^']+)'/g)) {
        expect(external.has(specifier!), `${file}: ${specifier}`).toBe(true);
      }
    }
  });
});

describe('the $default function', () => {
  it('answers problem+json 404 with CORS and the caller’s request id', async () => {
    const { handler } = await import('../../functions/system/not-found.ts');
    const reply = (await handler({ headers: { 'x-request-id': 'abc-123' } } as never)) as {
      statusCode: number;
      headers: Record<string, string>;
      body: string;
    };
    expect(reply.statusCode).toBe(404);
    expect(reply.headers).toMatchObject({
      'Content-Type': 'application/problem+json',
      'Access-Control-Allow-Origin': '*',
      'X-Request-Id': 'abc-123',
    });
    expect(JSON.parse(reply.body)).toMatchObject({ status: 404, code: 'not_found', request_id: 'abc-123' });
  });

  it('knows the route table: a wrong method on an existing path is a 405 with Allow, an unknown path a 404', async () => {
    const { handler } = await import('../../functions/system/not-found.ts');
    const invoke = async (method: string, rawPath: string) =>
      (await handler({
        ...apiGatewayHttpV2Event,
        rawPath,
        rawQueryString: '',
        routeKey: '$default',
        requestContext: {
          ...apiGatewayHttpV2Event.requestContext,
          http: { ...apiGatewayHttpV2Event.requestContext.http, method, path: rawPath },
        },
      } as never)) as { statusCode: number; headers: Record<string, string>; body: string };
    const wrong = await invoke('DELETE', '/v1/plannings');
    expect(wrong.statusCode).toBe(405);
    expect(wrong.headers).toMatchObject({ Allow: 'GET, POST', 'Content-Type': 'application/problem+json' });
    expect(JSON.parse(wrong.body)).toMatchObject({ status: 405, code: 'method_not_allowed' });
    const parameters = await invoke('PUT', '/v1/plannings/0b6f1c1e-2a5b-4c4e-9d7e-3f1e2d3c4b5a/job');
    expect(parameters.statusCode).toBe(405);
    expect(parameters.headers['Allow']).toBe('POST');
    const unknown = await invoke('GET', '/v1/nothing-here');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['Allow']).toBeUndefined();
    expect(JSON.parse(unknown.body)).toMatchObject({ status: 404, code: 'not_found' });
  });
});
