/** publishPartnerEvent: every partner acting for the organisation gets the event, nobody else; revoked ones neither. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { createOrganisation } = await import('../../shared/accounts/organisations.ts');
const { createClient, revokeClient } = await import('../../shared/tokens/clients.ts');
const { publishPartnerEvent } = await import('../../shared/webhooks/deliveries.ts');
const { drainLocalQueue } = await import('../../shared/ports/queue.ts');

const received: { path: string; body: { type: string; data: unknown } }[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    received.push({ path: req.url ?? '', body: JSON.parse(body) });
    res.writeHead(200);
    res.end();
  });
});
let base = '';

beforeAll(async () => {
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  base = `http://localhost:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => receiver.close());

describe('publishPartnerEvent', () => {
  it('fans out to the organisation’s live partners only', async () => {
    const orgA = await createOrganisation({ name: 'A', kind: 'platform' });
    const orgB = await createOrganisation({ name: 'B', kind: 'platform' });
    const partner = (name: string, orgId: string) =>
      createClient({
        kind: 'partner',
        name,
        roles: ['Partner'],
        orgId,
        webhookUrl: `${base}/${name}`,
        createdBy: 'test',
      });
    await partner('a1', orgA.id);
    await partner('a2', orgA.id);
    const revoked = await partner('a3', orgA.id);
    await partner('b1', orgB.id);
    await revokeClient(revoked.client.id, 'test');

    expect(await publishPartnerEvent(orgA.id, 'import.completed', { import_job_id: 'j1' })).toBe(2);
    const deadline = Date.now() + 5000;
    while (received.length < 2 && Date.now() < deadline) {
      await drainLocalQueue();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(received.map((r) => r.path).sort()).toEqual(['/a1', '/a2']);
    expect(received[0]!.body).toMatchObject({ type: 'import.completed', data: { import_job_id: 'j1' } });
  });
});
