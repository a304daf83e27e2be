/**
 * A partner's webhook endpoint in the test's own process: every delivery's JSON body kept in `received`, answered 204.
 * `partnerHook` also registers it as an organisation's partner (SysAdmin's partner authorization), by default with
 * every scope that reads events (contract 4.2: a partner receives only what its scopes read).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { Scope } from '../../shared/auth/roles.ts';
import type { Client } from './http.ts';

export interface WebhookDelivery {
  type: string;
  data: Record<string, unknown>;
}

export async function webhookReceiver() {
  const received: WebhookDelivery[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push(JSON.parse(body));
      res.writeHead(204);
      res.end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://localhost:${(server.address() as AddressInfo).port}/hook`;
  const close = () => new Promise<void>((done) => server.close(() => done()));
  return { url, received, close };
}

/** Scopes that read every event a partner's webhook can carry, positions included. */
export const EVENT_SCOPES: Scope[] = ['imports', 'plannings', 'locations:read'];

/** A receiver registered as the webhook of a partner (named `name`) of `orgId`, holding `scopes`. */
export async function partnerHook(
  api: Client,
  adminToken: string,
  orgId: string,
  name = 'TMS',
  scopes: Scope[] = EVENT_SCOPES,
) {
  const receiver = await webhookReceiver();
  const partner = await api.post(
    '/v1/admin/partner-authorizations',
    { name, webhook_url: receiver.url, org_id: orgId, scopes },
    adminToken,
  );
  expect(partner.status).toBe(201);
  return receiver;
}
