/**
 * Issue 28.7, the webhook SSRF filter: addresses as the URL parser normalises them (IPv4-mapped, IPv4-compatible,
 * NAT64, site-local…) are refused, and a delivery connects to the address that was checked, with one resolution only
 * (a name re-pointed after the check, DNS rebinding, reaches nothing else). Real sockets on 127.0.0.1 and 127.0.0.2.
 */

import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../shared/errors.ts';
import { problemBody, problemOf } from '../../shared/http/problems.ts';
import { checkWebhookUrl, isPrivateAddress } from '../../shared/tokens/webhook-url.ts';
import { postWebhook } from '../../shared/webhooks/transport.ts';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

/** A TCP listener that counts connections and closes them. */
async function listener(address: string, port = 0) {
  const seen = { connections: 0, port: 0 };
  const server = createServer((socket) => {
    seen.connections++;
    socket.destroy();
  });
  servers.push(server);
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, address, done);
  });
  seen.port = (server.address() as AddressInfo).port;
  return seen;
}

const PRIVATE = 'must not resolve to a private, loopback, link-local or other special-purpose address';

/**
 * A refusal as the domain says it (invalid input at `webhook_url`) and as a partner is answered for it (a 400
 * problem+json at that path): `400 invalid webhook_url: <message>`, or what was thrown instead.
 */
function refusalOf(error: unknown): string {
  if (!(error instanceof DomainError)) return `not a domain error: ${String(error)}`;
  const body = problemBody(problemOf(error), 'r') as { status: number; errors: { path: string; message: string }[] };
  return [body.status, error.kind, ...error.errors.map((e) => `${e.path}: ${e.message}`)].join(' ');
}

describe('the webhook address filter', () => {
  it('refuses the URL-normalised forms of private addresses (issue 28.7’s list and their kin)', async () => {
    const refused: string[] = [];
    for (const url of [
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:169.254.169.254]/',
      'https://[::ffff:10.0.0.1]/',
      'https://[::127.0.0.1]/',
      'https://[64:ff9b::a9fe:a9fe]/',
      'https://[64:ff9b::169.254.169.254]/',
      'https://[64:ff9b:1::a00:1]/',
      'https://[fec0::1]/',
      'https://[::ffff:7f00:1]/',
      'https://[0:0:0:0:0:ffff:7f00:1]/',
      'https://[::ffff:0:127.0.0.1]/',
      'https://[2002:7f00:1::1]/',
      'https://[2001:0:4136:e378::1]/',
      'https://[::]/',
      'https://[ff02::1]/',
      'https://0x7f000001/',
      'https://2130706433/',
      'https://0177.0.0.1/',
      'https://127.1/',
      'https://169.254.169.254/',
      'https://192.0.0.1/',
      'https://198.18.0.1/',
      'https://240.0.0.1/',
    ]) {
      const outcome = await checkWebhookUrl(url, 'webhook_url', false).then(() => 'accepted', refusalOf);
      if (outcome !== `400 invalid webhook_url: ${PRIVATE}`) refused.push(`${url} → ${outcome}`);
    }
    expect(refused).toEqual([]);
  });

  it('judges mapped, compatible, NAT64, 6to4, Teredo and site-local addresses, and leaves public ones alone', () => {
    for (const address of [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '::ffff:a00:1',
      '::7f00:1',
      '::127.0.0.1',
      '64:ff9b::a9fe:a9fe',
      'fec0::1',
      'fe80::1%eth0',
      '2002:a9fe:a9fe::',
      '2001:0:4136:e378::',
      'not an address',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '::ffff:93.184.216.34', '2606:4700::1111', '2001:4860:4860::8888'])
      expect(isPrivateAddress(address), address).toBe(false);
  });

  it('refuses at delivery a literal that reaches a 127.0.0.1 listener, and connects to nothing', async () => {
    const loopback = await listener('127.0.0.1');
    const outcome = await postWebhook(`https://[::ffff:7f00:1]:${loopback.port}/hook`, {}, '{}', {
      timeoutMs: 2_000,
      local: false,
    }).then(() => 'sent', refusalOf);
    expect(outcome).toBe(`400 invalid webhook_url: ${PRIVATE}`);
    expect(loopback.connections).toBe(0);
  });

  it('refuses at delivery a name that resolves to loopback (or to loopback among others), connecting to nothing', async () => {
    const loopback = await listener('127.0.0.1');
    for (const answers of [
      [{ address: '127.0.0.1', family: 4 }],
      [
        { address: '93.184.216.34', family: 4 },
        { address: '::ffff:127.0.0.1', family: 6 },
      ],
    ]) {
      const outcome = await postWebhook(`https://hooks.example.test:${loopback.port}/hook`, {}, '{}', {
        timeoutMs: 2_000,
        local: false,
        lookup: async () => answers,
      }).then(() => 'sent', refusalOf);
      expect(outcome).toBe(`400 invalid webhook_url: ${PRIVATE}`);
    }
    expect(loopback.connections).toBe(0);
  });

  it('resolves once and connects to the checked address, with the name as TLS server name (DNS rebinding)', async () => {
    // 127.0.0.1 stands for a public address here (the filter is told so); 127.0.0.2 is where the name is re-pointed.
    const names: string[] = [];
    const checked = createTlsServer({
      SNICallback: (name, done) => {
        names.push(name);
        done(new Error('no certificate here'));
      },
    });
    servers.push(checked as unknown as Server);
    await new Promise<void>((done) => checked.listen(0, '127.0.0.1', done));
    const port = (checked.address() as AddressInfo).port;
    const rebound = await listener('127.0.0.2', port);
    let lookups = 0;
    const attempt = postWebhook(`https://hooks.example.test:${port}/hook`, {}, '{"type":"x"}', {
      timeoutMs: 2_000,
      local: false,
      blocked: (address) => address !== '127.0.0.1' && isPrivateAddress(address),
      lookup: async () => [{ address: lookups++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }],
    });
    await expect(attempt).rejects.toThrow();
    expect(lookups).toBe(1);
    expect(names).toEqual(['hooks.example.test']);
    expect(rebound.connections).toBe(0);
  });
});
