/**
 * Issue 28.4, local mode: the host listens on 127.0.0.1 unless `HOST` says otherwise, and its credential-free local
 * surfaces (`/_local/*`, the WebSocket management API `/@connections/{id}`) answer without CORS and refuse what a web
 * page could send them: a foreign `Origin` (a page elsewhere), a `Host` under another name (DNS rebinding). Without
 * that, any page could ask A10 for the SysAdmin's reset, read the token from the outbox and take the account over.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultOptions, type RunningHost } from '../../lib/local/start.ts';
import { type Client, client } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
}, 60_000);
afterAll(() => host?.stop());

/** A raw request, so that any `Host` and `Origin` can be sent (fetch sets `Host` itself). */
function raw(method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
    (done, fail) => {
      const sent = request({ host: '127.0.0.1', port: host.port, method, path, headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          done({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString() }),
        );
      });
      sent.on('error', fail);
      sent.end(body);
    },
  );
}

/** Whether a TCP connection to `address:port` is accepted. */
function accepts(address: string, port: number) {
  return new Promise<boolean>((done) => {
    const socket = connect({ host: address, port });
    socket.setTimeout(2_000, () => {
      socket.destroy();
      done(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

const FOREIGN = ['https://evil.example', 'null', `http://localhost:${1}`, 'http://127.0.0.1.evil.example'];
const LOCAL_ONLY = [
  ['GET', '/_local/outbox'],
  ['GET', '/_local/push-outbox'],
  ['GET', '/@connections/some-connection'],
  ['POST', '/@connections/some-connection'],
  ['DELETE', '/live/@connections/some-connection'],
  ['OPTIONS', '/_local/outbox'],
] as const;

describe('the local host’s exposure', () => {
  it('listens on 127.0.0.1 by default (HOST changes it), and not on the machine’s other addresses', async () => {
    expect(host.address).toBe('127.0.0.1');
    const previous = process.env['HOST'];
    try {
      delete process.env['HOST'];
      expect(defaultOptions().host).toBe('127.0.0.1');
      process.env['HOST'] = '0.0.0.0';
      expect(defaultOptions().host).toBe('0.0.0.0');
    } finally {
      if (previous === undefined) delete process.env['HOST'];
      else process.env['HOST'] = previous;
    }
    expect(await accepts('127.0.0.1', host.port)).toBe(true);
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((face) => face !== undefined && !face.internal && face.family === 'IPv4')
      .map((face) => face!.address);
    for (const address of others) expect(await accepts(address, host.port), address).toBe(false);
  });

  it('serves /_local/* without CORS, and the API routes with it', async () => {
    const outbox = await raw('GET', '/_local/outbox', {});
    expect(outbox.status).toBe(200);
    expect(JSON.parse(outbox.body)).toHaveProperty('messages');
    expect(outbox.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await raw('OPTIONS', '/_local/outbox', {});
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();

    const roles = await raw('GET', '/v1/roles', { origin: 'https://app.example' });
    expect(roles.status).toBe(401);
    expect(roles.headers['access-control-allow-origin']).toBe('*');
    const apiPreflight = await raw('OPTIONS', '/v1/auth/login', {
      origin: 'https://app.example',
      'access-control-request-method': 'POST',
    });
    expect(apiPreflight.status).toBe(204);
    expect(apiPreflight.headers['access-control-allow-origin']).toBe('*');
  });

  it('refuses a foreign Origin on /_local/* and /@connections with a 403 problem+json without CORS', async () => {
    const wrong: string[] = [];
    for (const [method, path] of LOCAL_ONLY) {
      for (const origin of FOREIGN) {
        const answer = await raw(method, path, { origin, 'content-type': 'application/json' }, '{}');
        const body = answer.body ? (JSON.parse(answer.body) as { status?: number; code?: string }) : {};
        if (
          answer.status !== 403 ||
          answer.headers['content-type'] !== 'application/problem+json' ||
          body.code !== 'forbidden' ||
          answer.headers['access-control-allow-origin'] !== undefined
        )
          wrong.push(`${method} ${path} from ${origin} → ${answer.status} ${answer.body.slice(0, 80)}`);
      }
    }
    expect(wrong).toEqual([]);
    // The host's own pages (same origin) may still read the outbox.
    const own = await raw('GET', '/_local/outbox', {
      origin: `http://localhost:${host.port}`,
      host: `localhost:${host.port}`,
    });
    expect(own.status).toBe(200);
  });

  it('refuses a Host under another name (DNS rebinding), and answers localhost and IP addresses', async () => {
    for (const [method, path] of LOCAL_ONLY) {
      const rebound = await raw(method, path, { host: `evil.example:${host.port}` });
      expect(rebound.status, `${method} ${path}`).toBe(403);
      expect(JSON.parse(rebound.body)).toMatchObject({ status: 403, code: 'forbidden' });
    }
    for (const name of ['localhost', '127.0.0.1', '[::1]'])
      expect((await raw('GET', '/_local/outbox', { host: `${name}:${host.port}` })).status, name).toBe(200);
  });

  it('keeps the reset token of the SysAdmin from a page of another origin', async () => {
    await api.post('/v1/auth/password/forgot', { user: { email: ADMIN.email } });
    const stolen = await raw('GET', `/_local/outbox?to=${encodeURIComponent(ADMIN.email)}`, {
      origin: 'https://evil.example',
    });
    expect(stolen.status).toBe(403);
    expect(stolen.body).not.toContain('token');
    const read = await api.get<{ messages: unknown[] }>(`/_local/outbox?to=${encodeURIComponent(ADMIN.email)}`);
    expect(read.body.messages.length).toBeGreaterThan(0);
  });
});

describe('a wrong method on an existing path (issue 36 item 7)', () => {
  it('is a 405 problem whose Allow names the path’s methods (RFC 9110); an unknown path stays a 404', async () => {
    const wrong = await raw('DELETE', '/v1/plannings', {});
    expect(wrong.status).toBe(405);
    expect(wrong.headers['allow']).toBe('GET, POST');
    expect(wrong.headers['content-type']).toBe('application/problem+json');
    expect(wrong.headers['access-control-allow-origin']).toBe('*');
    // A page of another origin may read it too.
    expect(wrong.headers['access-control-expose-headers']).toContain('Allow');
    expect(JSON.parse(wrong.body)).toMatchObject({
      status: 405,
      code: 'method_not_allowed',
      detail: 'DELETE is not an operation of this path; it takes GET, POST',
    });
    // A path with parameters: X16 takes only POST.
    const assign = await api.call('GET', '/v1/plannings/p-1/runsheets/r-1/assign');
    expect(assign.status).toBe(405);
    expect(assign.headers.get('allow')).toBe('POST');
    // HEAD is no operation either: API Gateway matches a route by its method.
    expect((await raw('HEAD', '/v1/me', {})).headers['allow']).toBe('GET');
    const unknown = await raw('DELETE', '/v1/nothing-here', {});
    expect(unknown.status).toBe(404);
    expect(unknown.headers['allow']).toBeUndefined();
    expect(JSON.parse(unknown.body)).toMatchObject({ status: 404, code: 'not_found' });
  });
});
