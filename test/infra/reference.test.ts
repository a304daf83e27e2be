/**
 * Issue 42 item 12: `/health`, `/openapi.json` and `/docs` exist in the deployed API, not only locally: public routes
 * (no authorizer) of the HTTP API to the reference function (functions/system/reference.ts), which answers as the
 * local host does, cacheable, with the Swagger UI files its bundle carries (laid out here as the bundling hook lays
 * them out).
 */
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import { buildReferenceDocument } from '../../lib/reference-build.ts';
import { REFERENCE_ROUTES } from '../../lib/stacks/api-stack.ts';
import { DOCS_ASSETS, DOCS_PAGE } from '../../shared/reference/page.ts';

describe('the cloud API reference and health check', () => {
  it('are public GET routes of the HTTP API, no authorizer, to the reference function', () => {
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
      context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong' },
    });
    buildApp(app, { env: { account: '123456789012', region: 'eu-west-1' } });
    const api = app.node.children.find(
      (child): child is Stack => child instanceof Stack && child.node.id === 'DispatchApi',
    )!;
    const template = Template.fromStack(api);
    const functions = template.findResources('AWS::Lambda::Function', {
      Properties: { Description: 'GET /health, /openapi.json, /docs and its assets' },
    });
    expect(Object.keys(functions)).toHaveLength(1);
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
      (route) => route['Properties'] as { RouteKey: string; AuthorizationType?: string; AuthorizerId?: unknown },
    );
    for (const [, path] of REFERENCE_ROUTES) {
      const route = routes.find((r) => r.RouteKey === `GET ${path}`);
      expect(route, path).toBeDefined();
      expect(route!.AuthorizerId, path).toBeUndefined();
      expect(route!.AuthorizationType ?? 'NONE', path).toBe('NONE');
    }
    expect(REFERENCE_ROUTES.map(([, path]) => path)).toEqual([
      '/health',
      '/openapi.json',
      '/docs',
      '/docs/assets/{file}',
    ]);
  }, 240_000);

  describe('answers as deployed', () => {
    const saved = process.env['LAMBDA_TASK_ROOT'];
    let handler: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
    beforeAll(async () => {
      const root = mkdtempSync(join(tmpdir(), 'reference-bundle-'));
      mkdirSync(join(root, 'docs-assets'));
      const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
      for (const name of Object.keys(DOCS_ASSETS)) copyFileSync(join(dist, name), join(root, 'docs-assets', name));
      // The document as the bundling writes it (lib/reference-build.ts).
      buildReferenceDocument(join(root, 'docs-assets', 'openapi.json'));
      process.env['LAMBDA_TASK_ROOT'] = root;
      vi.resetModules();
      handler = (await import('../../functions/system/reference.ts')).handler as typeof handler;
    });
    afterAll(() => {
      if (saved === undefined) delete process.env['LAMBDA_TASK_ROOT'];
      else process.env['LAMBDA_TASK_ROOT'] = saved;
    });
    const get = (path: string, file?: string) =>
      handler({
        rawPath: path,
        pathParameters: file ? { file } : undefined,
        requestContext: { requestId: 'req-1', domainName: 'abc123.execute-api.eu-west-1.amazonaws.com' },
      } as unknown as APIGatewayProxyEventV2);

    it('serves /health, the document naming its own URL, the page and its files, cacheable', async () => {
      const health = await get('/health');
      expect(health.statusCode).toBe(200);
      expect(JSON.parse(health.body!)).toEqual({ status: 'ok' });
      const document = await get('/openapi.json');
      expect(document.statusCode).toBe(200);
      expect(document.headers?.['Cache-Control']).toBe('public, max-age=300');
      const parsed = JSON.parse(document.body!) as { openapi: string; servers: { url: string }[]; paths: object };
      expect(parsed.openapi).toMatch(/^3\.1/);
      expect(parsed.servers[0]!.url).toBe('https://abc123.execute-api.eu-west-1.amazonaws.com');
      expect(Object.keys(parsed.paths)).toContain('/v1/auth/token');
      const page = await get('/docs');
      expect(page.statusCode).toBe(200);
      expect(page.body).toBe(DOCS_PAGE);
      const script = await get('/docs/assets/swagger-ui-bundle.js', 'swagger-ui-bundle.js');
      expect(script.statusCode).toBe(200);
      expect(script.headers?.['Content-Type']).toBe('text/javascript');
      expect(Buffer.from(script.body!, 'base64').length).toBeGreaterThan(100_000);
      expect((await get('/docs/assets/package.json', 'package.json')).statusCode).toBe(404);
    });
  });
});
