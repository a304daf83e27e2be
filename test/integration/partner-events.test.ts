/**
 * publishPartnerEvent: every partner acting for the organisation gets the event, nobody else; revoked ones neither;
 * and each gets only what its scopes read through the API (contract 4.2), as its scopes are when it is delivered.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../shared/auth/roles.ts';
import { useLocalServices } from '../support/local.ts';

process.env['WEBHOOK_RETRY_DELAYS_MS'] = '100';
await useLocalServices();
const { createOrganisation } = await import('../../shared/accounts/organisations.ts');
const { createClient, findClient, revokeClient, updateClient } = await import('../../shared/tokens/clients.ts');
const { publishPartnerEvent } = await import('../../shared/webhooks/deliveries.ts');
const { drainLocalQueue } = await import('../../shared/ports/queue.ts');

const received: { path: string; body: { type: string; data: Record<string, unknown> } }[] = [];
/** Paths whose next delivery is answered 503 (once each). */
const failNext = new Set<string>();
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    const path = req.url ?? '';
    if (failNext.delete(path)) {
      res.writeHead(503);
      res.end();
      return;
    }
    received.push({ path, body: JSON.parse(body) });
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

const partner = (name: string, orgId: string, scopes?: Scope[]) =>
  createClient({
    kind: 'partner',
    name,
    roles: ['Partner'],
    orgId,
    ...(scopes ? { scopes } : {}),
    webhookUrl: `${base}/${name}`,
    createdBy: 'test',
  });

/** Waits until every queued delivery (retries due within `ms` included) has been answered. */
async function delivered(ms = 50) {
  await new Promise((r) => setTimeout(r, ms));
  await drainLocalQueue();
}

const typesAt = (path: string) =>
  received
    .filter((r) => r.path === path)
    .map((r) => r.body.type)
    .sort();

describe('publishPartnerEvent', () => {
  it('fans out to the organisation’s live partners only', async () => {
    const orgA = await createOrganisation({ name: 'A', kind: 'platform' });
    const orgB = await createOrganisation({ name: 'B', kind: 'platform' });
    await partner('a1', orgA.id, ['imports']);
    await partner('a2', orgA.id, ['imports']);
    const revoked = await partner('a3', orgA.id, ['imports']);
    await partner('b1', orgB.id, ['imports']);
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

  it('sends each partner only the events its scopes read, and a position only with locations:read (issue 51.6)', async () => {
    const org = await createOrganisation({ name: 'Scoped', kind: 'platform' });
    await partner('invite-only', org.id);
    await partner('imports-only', org.id, ['imports']);
    await partner('plannings', org.id, ['plannings']);
    await partner('plannings-locations', org.id, ['plannings', 'locations:read']);
    const task = {
      planning_id: 'p1',
      runsheet_id: 'RS-1',
      task_id: 't1',
      driver: { id: 'd1', name: 'Dee' },
      type: 'delivered',
      latitude: 1.35,
      longitude: 103.85,
    };

    expect(await publishPartnerEvent(org.id, 'import.completed', { import_job_id: 'j2' })).toBe(1);
    expect(await publishPartnerEvent(org.id, 'route_build.completed', { route_build_id: 'b1' })).toBe(2);
    expect(await publishPartnerEvent(org.id, 'runsheet.completed', { runsheet_id: 'RS-1' })).toBe(2);
    expect(await publishPartnerEvent(org.id, 'task.delivered', task)).toBe(2);
    await delivered();

    expect(typesAt('/invite-only')).toEqual([]);
    expect(typesAt('/imports-only')).toEqual(['import.completed']);
    const planningEvents = ['route_build.completed', 'runsheet.completed', 'task.delivered'];
    expect(typesAt('/plannings')).toEqual(planningEvents);
    expect(typesAt('/plannings-locations')).toEqual(planningEvents);
    const taskAt = (path: string) => received.find((r) => r.path === path && r.body.type === 'task.delivered')!.body;
    const { latitude: _lat, longitude: _lng, ...withoutPosition } = task;
    expect(taskAt('/plannings').data).toEqual(withoutPosition);
    expect(taskAt('/plannings-locations').data).toEqual(task);
  });

  it('withholds a retried event from a partner whose scope was taken away since it was queued (T5)', async () => {
    const org = await createOrganisation({ name: 'Rescoped', kind: 'platform' });
    const { client } = await partner('rescoped', org.id, ['plannings', 'locations:read']);
    failNext.add('/rescoped');
    expect(
      await publishPartnerEvent(org.id, 'task.picked_up', { task_id: 't2', latitude: 1.3, longitude: 103.8 }),
    ).toBe(1);
    await delivered();
    expect(failNext.has('/rescoped')).toBe(false);
    // The first attempt was refused; before its retry, a SysAdmin leaves the partner users:invite only.
    await updateClient((await findClient(client.id))!, { scopes: ['users:invite'] });
    await delivered(300);
    expect(typesAt('/rescoped')).toEqual([]);
  });
});
