import { beforeAll, describe, expect, it } from 'vitest';
import { invoke } from '../support/invoke.ts';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const create = (await import('../../functions/orgs/create.ts')).handler;
const list = (await import('../../functions/orgs/list.ts')).handler;
const read = (await import('../../functions/orgs/read.ts')).handler;
const roles = (await import('../../functions/orgs/roles.ts')).handler;

const admin = {
  kind: 'user' as const,
  id: 'a0a0a0a0-0000-4000-8000-000000000000',
  roles: ['SysAdmin' as const],
  orgId: null,
};
const orgAdmin = { ...admin, id: 'b0b0b0b0-0000-4000-8000-000000000000', roles: ['OrgAdmin' as const] };

type Org = { id: string; name: string; kind: string; created_at: string };
type OrgPage = { organisations: Org[]; meta: { page: number; per_page: number; next_page_token: string | null } };

const names: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < 25; i++) {
    const response = await invoke<Org>(create, { body: { name: `Org ${i}`, kind: 'merchant' }, caller: admin });
    expect(response.status).toBe(201);
    names.push(response.body.name);
  }
});

describe('X2 create an organisation', () => {
  it('returns id, name, kind and created_at', async () => {
    const response = await invoke<Org>(create, { body: { name: '  Acme  ', kind: 'platform' }, caller: admin });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(String),
      name: 'Acme',
      kind: 'platform',
      created_at: expect.stringMatching(/Z$/),
    });
    const back = await invoke<Org>(read, { method: 'GET', params: { orgID: response.body.id }, caller: admin });
    expect(back.body).toEqual(response.body);
  });

  it('refuses a bad kind, a missing name and a non-SysAdmin', async () => {
    const bad = await invoke(create, { body: { name: 'x', kind: 'bank' }, caller: admin });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ errors: [{ path: 'kind' }] });
    const missing = await invoke(create, { body: { kind: 'merchant' }, caller: admin });
    expect(missing.body).toMatchObject({ errors: [{ path: 'name', message: 'is required' }] });
    expect((await invoke(create, { body: { name: 'x', kind: 'merchant' }, caller: orgAdmin })).status).toBe(403);
  });

  it('replays the stored response for a repeated Idempotency-Key and refuses the key with another body', async () => {
    const headers = { 'idempotency-key': 'create-org-1' };
    const first = await invoke<Org>(create, { body: { name: 'Once', kind: 'merchant' }, caller: admin, headers });
    const again = await invoke<Org>(create, { body: { name: 'Once', kind: 'merchant' }, caller: admin, headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const other = await invoke(create, { body: { name: 'Twice', kind: 'merchant' }, caller: admin, headers });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'idempotency_key_reused' });
  });
});

describe('X3 list and read organisations', () => {
  const page = (query: string) => invoke<OrgPage>(list, { method: 'GET', query, caller: admin });

  it('walks every organisation newest first with page tokens, at one page a call', async () => {
    const seen: Org[] = [];
    let token: string | null = null;
    do {
      const response: { body: OrgPage } = await page(`per_page=10${token ? `&page_token=${token}` : ''}`);
      seen.push(...response.body.organisations);
      token = response.body.meta.next_page_token;
    } while (token);
    const created = seen.map((o) => o.created_at);
    expect(created).toEqual([...created].sort().reverse());
    for (const name of names) expect(seen.map((o) => o.name)).toContain(name);
  });

  it('reaches the same page by number as by token', async () => {
    const first = await page('per_page=7');
    const second = await page(`per_page=7&page_token=${first.body.meta.next_page_token}`);
    const numbered = await page('per_page=7&page=2');
    expect(numbered.body.organisations).toEqual(second.body.organisations);
    expect(numbered.body.meta).toMatchObject({ page: 2, per_page: 7 });
  });

  it('answers a page past the end with an empty list, and bad paging with 400', async () => {
    const beyond = await page('per_page=10&page=100');
    expect(beyond.body).toEqual({ organisations: [], meta: { page: 100, per_page: 10, next_page_token: null } });
    expect((await page('per_page=1001')).status).toBe(400);
    expect((await page('page_token=garbage')).body).toMatchObject({ errors: [{ path: 'query.page_token' }] });
  });

  it('answers an unknown or malformed id with 404 / 400', async () => {
    const unknown = await invoke(read, {
      method: 'GET',
      params: { orgID: 'c0c0c0c0-0000-4000-8000-000000000000' },
      caller: admin,
    });
    expect(unknown.status).toBe(404);
    const malformed = await invoke(read, { method: 'GET', params: { orgID: 'nope' }, caller: admin });
    expect(malformed.body).toMatchObject({ status: 400, errors: [{ path: 'path.orgID' }] });
  });
});

describe('X4 roles', () => {
  it('lists all thirteen roles with fixed ids, to any caller', async () => {
    const response = await invoke<{ roles: { id: string; name: string }[] }>(roles, {
      method: 'GET',
      caller: orgAdmin,
    });
    expect(response.body.roles).toHaveLength(13);
    expect(response.body.roles).toContainEqual({ id: 'b0e5c3a1-0001-4000-8000-000000000001', name: 'SysAdmin' });
    expect((await invoke(roles, { method: 'GET' })).status).toBe(401);
  });
});
