/**
 * Deep page numbers: the first visit walks and stores anchors; later visits read one anchor and one page; any change
 * of membership or order retires the anchors, and the pages stay exactly what a page-token walk returns.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { createUser, getUser, updateUser } = await import('../../shared/accounts/users.ts');
const { createOrganisation } = await import('../../shared/accounts/organisations.ts');
const { listUsersByRole, deleteUser } = await import('../../shared/accounts/directory.ts');
const { db } = await import('../../shared/db/client.ts');

let orgId = '';
let calls = 0;
const query = (page: number, pageToken?: string) =>
  listUsersByRole({ orgId, role: 'OrgDriver', sortBy: 'name', order: 'asc' }, { page, perPage: 5, pageToken });

async function walk(): Promise<string[][]> {
  const pages: string[][] = [];
  let token: string | undefined;
  let page = 1;
  do {
    const result = await query(page, token);
    pages.push(result.users.map((u) => u.name));
    token = result.meta.next_page_token ?? undefined;
    page++;
  } while (token);
  return pages;
}

beforeAll(async () => {
  orgId = (await createOrganisation({ name: 'Anchored', kind: 'transporter' })).id;
  for (let i = 0; i < 32; i++) {
    await createUser({
      email: `d${i}@anchor.example`,
      name: `Driver ${String(i).padStart(2, '0')}`,
      roles: ['OrgDriver'],
      org_id: orgId,
    });
  }
  db().middlewareStack.add(
    (next) => async (args) => {
      calls++;
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
});

describe('page anchors', () => {
  it('serve a deep page number with the same users as the token walk, cheaply from the second visit on', async () => {
    const pages = await walk();
    expect(pages).toHaveLength(7);
    calls = 0;
    const first = await query(6);
    const firstCalls = calls;
    expect(first.users.map((u) => u.name)).toEqual(pages[5]);
    calls = 0;
    const again = await query(6);
    expect(again.users.map((u) => u.name)).toEqual(pages[5]);
    // The organisation, the counter, the anchor, the page: four calls, however deep the page.
    expect(calls).toBe(4);
    expect(firstCalls).toBeGreaterThan(calls);
    // Anchors for every page passed were stored on the way.
    calls = 0;
    expect((await query(4)).users.map((u) => u.name)).toEqual(pages[3]);
    expect(calls).toBe(4);
  });

  it('are retired by a rename that changes the order, and by a deletion', async () => {
    await query(5);
    const renamed = (await query(1)).users[0]!;
    const user = (await getUser(renamed.id))!;
    await updateUser(user, { name: 'Zz Last Now' });
    const pages = await walk();
    expect(pages.flat().at(-1)).toBe('Zz Last Now');
    expect((await query(5)).users.map((u) => u.name)).toEqual(pages[4]);

    await deleteUser('d10@anchor.example');
    const after = await walk();
    expect(after.flat()).not.toContain('Driver 10');
    expect((await query(5)).users.map((u) => u.name)).toEqual(after[4]);
    expect((await query(6)).meta).toMatchObject({ total: 31, total_pages: 7 });
  });

  it('answer a page past the end with an empty page', async () => {
    expect((await query(40)).users).toEqual([]);
  });
});
