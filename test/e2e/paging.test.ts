/**
 * Paged lists end with `meta.next_page_token: null`, also when the last page is exactly full (a token there would
 * lead to an empty page): walked by token and by page number, over lists whose size the page size divides and does
 * not, in every order and sort the lists offer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let org: string;
let planner: string;

interface Listed {
  meta: { page: number; next_page_token: string | null };
  [list: string]: unknown;
}

/** Every page of `path` by token: the size of each page, and the ids in order. */
async function walk(path: string, list: string, token: string): Promise<{ sizes: number[]; ids: string[] }> {
  const sizes: number[] = [];
  const ids: string[] = [];
  let pageToken: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const url: string = pageToken ? `${path}${separator}page_token=${encodeURIComponent(pageToken)}` : path;
    const response = await api.get<Listed>(url, token);
    expect(response.status, url).toBe(200);
    const items = response.body[list] as { id: string }[];
    sizes.push(items.length);
    ids.push(...items.map((item) => item.id));
    pageToken = response.body.meta.next_page_token;
  } while (pageToken && sizes.length < 20);
  return { sizes, ids };
}

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  org = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Pages', kind: 'transporter' }, admin)).body
    .id;
  // Six drivers (pending invitations are users of the organisation too) and an OrgAdmin who plans.
  for (let i = 0; i < 6; i++) {
    await api.post(
      '/v1/admin/invitations',
      { user: { email: `pager${i}.${org.slice(0, 8)}@example.com`, org_id: org, role_id: ROLES.OrgDriver } },
      admin,
    );
  }
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).token;
  for (let i = 0; i < 6; i++) await api.post('/v1/plannings', { name: `Day ${i}` }, planner);
}, 60_000);
afterAll(() => host?.stop());

describe('the last page', () => {
  it('A14 and A15 carry no token on an exactly full last page, in every sort and order', async () => {
    // A14: six drivers and the OrgAdmin.
    const users = `/v1/admin/users?org_id=${org}`;
    expect((await walk(`${users}&per_page=7`, 'users', admin)).sizes).toEqual([7]);
    expect((await walk(`${users}&per_page=1`, 'users', admin)).sizes).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect((await walk(`${users}&per_page=3`, 'users', admin)).sizes).toEqual([3, 3, 1]);
    for (const sort of ['name', 'email', 'created_at']) {
      for (const order of ['asc', 'desc']) {
        const path = `/v1/admin/users/by-role?org_id=${org}&role_name=OrgDriver&sort_by=${sort}&order=${order}`;
        const all = await walk(`${path}&per_page=6`, 'users', admin);
        expect(all.sizes, `${sort} ${order}`).toEqual([6]);
        const byTwo = await walk(`${path}&per_page=2`, 'users', admin);
        expect(byTwo.sizes, `${sort} ${order}`).toEqual([2, 2, 2]);
        expect(byTwo.ids).toEqual(all.ids);
      }
    }
  });

  it('P1, ranged and ordered, carries no token on an exactly full last page', async () => {
    for (const order of ['asc', 'desc']) {
      const all = await walk(`/v1/plannings?order=${order}&per_page=6`, 'plannings', planner);
      expect(all.sizes).toEqual([6]);
      const byThree = await walk(`/v1/plannings?order=${order}&per_page=3`, 'plannings', planner);
      expect(byThree.sizes).toEqual([3, 3]);
      expect(byThree.ids).toEqual(all.ids);
    }
  });

  it('P1 lists each planning with exactly id, name, total_runsheets, total_drivers and version_rev', async () => {
    const listed = await api.get<{ plannings: Record<string, unknown>[] }>('/v1/plannings?per_page=2', planner);
    for (const planning of listed.body.plannings) {
      expect(Object.keys(planning).sort()).toEqual(['id', 'name', 'total_drivers', 'total_runsheets', 'version_rev']);
    }
    expect(listed.body.plannings).toHaveLength(2);
  });

  it('a page reached by number that ends the list carries no token either', async () => {
    const second = await api.get<Listed>(`/v1/admin/users?org_id=${org}&per_page=4&page=2`, admin);
    expect((second.body['users'] as unknown[]).length).toBe(3);
    expect(second.body.meta.next_page_token).toBeNull();
    const exact = await api.get<Listed>(`/v1/plannings?per_page=3&page=2`, planner);
    expect((exact.body['plannings'] as unknown[]).length).toBe(3);
    expect(exact.body.meta.next_page_token).toBeNull();
  });
});
