/**
 * Issue 33.1 in the cloud build: the function that serves `/ops` (functions/system/ops.ts) answers with the same
 * headers as the local host (a CSP that allows no inline or foreign script and no framing, whose img-src names the
 * configured tile server and whose connect-src names the WebSocket API; nosniff; a referrer policy), its tile server
 * comes from the deployment (`-c opsTileUrl`, the function's `OPS_TILE_URL`), never from the query, and it serves
 * the page's script from its bundle's `ops-assets/` (laid out here as the bundling hook lays it out).
 */
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import { OPS_ASSETS } from '../../shared/ops/page.ts';
import { cspDirectives } from '../support/csp.ts';

const newApp = (context: Record<string, unknown> = {}) =>
  new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong', ...context },
  });

/** The environment the synthesized template gives the `/ops` function. */
function opsEnvironment(context: Record<string, unknown>): Record<string, unknown> {
  const app = newApp(context);
  buildApp(app, { env: { account: '123456789012', region: 'eu-west-1' } });
  const realtime = app.node.children.find(
    (child): child is Stack => child instanceof Stack && child.node.id === 'DispatchRealtime',
  )!;
  const functions = Template.fromStack(realtime).findResources('AWS::Lambda::Function', {
    Properties: { Description: Match.stringLikeRegexp('^GET /ops, the live operations page') },
  });
  expect(Object.keys(functions)).toHaveLength(1);
  const fn = Object.values(functions)[0]!['Properties'] as { Environment: { Variables: Record<string, unknown> } };
  return fn.Environment.Variables;
}

const TILES = 'https://tiles.maps.example/{z}/{x}/{y}.png';
const WEBSOCKET = 'wss://abc123.execute-api.eu-west-1.amazonaws.com/live';

describe('the cloud /ops function', () => {
  // One synthesis (a slow step on a shared machine); the default (OpenStreetMap's) is DEFAULT_TILE_URL's one line.
  it('is given the tile server the deployment names (-c opsTileUrl)', () => {
    expect(opsEnvironment({ opsTileUrl: TILES })['OPS_TILE_URL']).toBe(TILES);
  }, 240_000);

  it("refuses to build with a tile URL that is not one: the synthesis stops, not a dispatcher's browser", () => {
    expect(() => buildApp(newApp({ opsTileUrl: 'javascript:alert(1)' }))).toThrow(/OPS_TILE_URL/);
    expect(() => buildApp(newApp({ opsTileUrl: 'https://tiles.example/tile.png' }))).toThrow(/\{z\}/);
  }, 120_000);

  describe('answers as deployed', () => {
    const saved = { ...process.env };
    let handler: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
    beforeAll(async () => {
      // The bundle's layout: the handler beside ops-assets/, holding what the bundling hook copies there.
      const root = mkdtempSync(join(tmpdir(), 'ops-bundle-'));
      mkdirSync(join(root, 'ops-assets'));
      for (const [name, { source }] of Object.entries(OPS_ASSETS)) {
        copyFileSync(join(process.cwd(), source), join(root, 'ops-assets', name));
      }
      Object.assign(process.env, { LAMBDA_TASK_ROOT: root, OPS_TILE_URL: TILES, OPS_WEBSOCKET_URL: WEBSOCKET });
      vi.resetModules();
      handler = (await import('../../functions/system/ops.ts')).handler as typeof handler;
    });
    afterAll(() => {
      for (const name of ['LAMBDA_TASK_ROOT', 'OPS_TILE_URL', 'OPS_WEBSOCKET_URL']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    });
    const get = (path: string, file?: string, query?: Record<string, string>) =>
      handler({
        rawPath: path,
        pathParameters: file ? { file } : undefined,
        queryStringParameters: query,
        requestContext: { requestId: 'req-1' },
      } as unknown as APIGatewayProxyEventV2);

    it('serves the page with the CSP, nosniff and a referrer policy; ?tiles= changes nothing', async () => {
      const page = await get('/ops', undefined, { tiles: 'https://evil.example/{z}/{x}/{y}.png' });
      expect(page.statusCode).toBe(200);
      const headers = page.headers as Record<string, string>;
      const policy = cspDirectives(headers['Content-Security-Policy']);
      expect(policy.get('default-src')).toEqual(["'none'"]);
      expect(policy.get('script-src')).toEqual(["'self'"]);
      expect(policy.get('style-src')).toEqual(["'self'"]);
      expect(policy.get('img-src')).toEqual(["'self'", 'data:', 'https://tiles.maps.example']);
      expect(policy.get('connect-src')).toEqual(["'self'", 'wss://abc123.execute-api.eu-west-1.amazonaws.com']);
      expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
      expect(headers['X-Content-Type-Options']).toBe('nosniff');
      expect(headers['Referrer-Policy']).toBe('no-referrer');
      expect(headers['Content-Type']).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('<script src="/ops/assets/app.js"></script>');
      expect(page.body).toContain(TILES);
      expect(page.body).not.toContain('evil.example');
    });

    it("serves the page's script from its bundle, not sniffed, and a problem for a file it does not have", async () => {
      const script = await get('/ops/assets/app.js', 'app.js');
      expect(script.statusCode).toBe(200);
      expect(script.headers?.['Content-Type']).toBe('text/javascript; charset=utf-8');
      expect(script.headers?.['X-Content-Type-Options']).toBe('nosniff');
      expect(Buffer.from(script.body!, 'base64').toString()).toContain('bindTooltip(label, {');
      const missing = await get('/ops/assets/page.ts', 'page.ts');
      expect(missing.statusCode).toBe(404);
      expect(missing.headers?.['Content-Type']).toBe('application/problem+json');
      expect(JSON.parse(missing.body!)).toMatchObject({ status: 404, code: 'not_found' });
    });
  });
});
