/**
 * The conformance check itself: the served document is the generated one, every response the client sees is checked
 * against it, and the check does refuse what the document does not describe.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { openApiDocument } from '../../lib/openapi.ts';
import { checkConformance, conformanceChecks } from '../support/conformance.ts';
import { type Client, client, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
});
afterAll(() => host?.stop());

describe('OpenAPI conformance', () => {
  it('serves the document generated from the route table', async () => {
    const served = await (await fetch(`${host.url}/openapi.json`)).json();
    expect(served).toEqual(JSON.parse(JSON.stringify(openApiDocument(host.url))));
  });

  it('checks every response the test client receives', async () => {
    const before = conformanceChecks();
    const { bearer_token } = await loginAs(api, ADMIN.email, ADMIN.password);
    await api.get('/v1/roles', bearer_token);
    await api.get('/v1/roles');
    expect(conformanceChecks() - before).toBe(3);
  });

  it('refuses a body, a status or a content type the document does not describe', async () => {
    const check = (status: number, type: string | null, body: unknown) =>
      checkConformance(host.url, 'POST', '/v1/auth/login', status, type, body);
    await expect(check(200, 'application/json', { bearer_token: 1 })).rejects.toThrow(/schema refuses/);
    await expect(check(200, 'text/html', '<p>hi</p>')).rejects.toThrow(/the document says application\/json/);
    await expect(check(400, 'application/problem+json', { title: 'no type or status' })).rejects.toThrow(
      /schema refuses/,
    );
    await expect(
      checkConformance(host.url, 'GET', '/v1/files?bucket=b', 400, 'application/json', { message: 'x' }),
    ).rejects.toThrow(/must have required property 'Error'/);
    await expect(
      checkConformance(host.url, 'GET', '/v1/files?bucket=b', 400, 'application/json', { Error: 'bucket is required' }),
    ).resolves.toBeUndefined();
  });
});
