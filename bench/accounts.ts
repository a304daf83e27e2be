/**
 * A15 over 5 000 users of one organisation and role: what page 1 and page 50 cost in DynamoDB calls, items read
 * and consumed capacity, by page token (one Query) and by page number (a walk on the first visit after a change,
 * then one anchor read and one Query).
 */
import { startBenchHost } from './host.ts';

const USERS = 5000;

export async function benchAccounts() {
  await startBenchHost('accounts');
  const { db } = await import('#shared/db/client');
  const { createUser } = await import('#shared/accounts/users');
  const { createOrganisation } = await import('#shared/accounts/organisations');
  const { listUsersByRole } = await import('#shared/accounts/directory');
  const org = await createOrganisation({ name: 'Big fleet', kind: 'transporter' });
  const seeded = performance.now();
  for (let i = 0; i < USERS; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, USERS - i) }, (_, j) =>
        createUser({
          email: `driver${i + j}@fleet.example`,
          name: `Driver ${String(i + j).padStart(5, '0')}`,
          roles: ['OrgDriver'],
          org_id: org.id,
        }),
      ),
    );
  }
  console.log(
    `\n## A15 over ${USERS} users of one organisation and role (seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s)`,
  );

  // Count what every DynamoDB call of a request reads.
  const tally = { calls: 0, itemsRead: 0, capacity: 0 };
  db().middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as Record<string, unknown>;
      input['ReturnConsumedCapacity'] = 'TOTAL';
      const result = await next(args);
      const output = result.output as {
        ScannedCount?: number;
        Count?: number;
        Item?: unknown;
        ConsumedCapacity?: { CapacityUnits?: number };
      };
      tally.calls++;
      tally.itemsRead += output.ScannedCount ?? (output.Item ? 1 : 0);
      tally.capacity += output.ConsumedCapacity?.CapacityUnits ?? 0;
      return result;
    },
    { step: 'initialize', name: 'benchTally' },
  );
  const measure = async (label: string, page: { page: number; perPage: number; pageToken?: string }) => {
    Object.assign(tally, { calls: 0, itemsRead: 0, capacity: 0 });
    const started = performance.now();
    const result = await listUsersByRole({ orgId: org.id, role: 'OrgDriver', sortBy: 'name', order: 'asc' }, page);
    const ms = performance.now() - started;
    console.log(
      `${label.padEnd(34)} ${String(result.users.length).padStart(4)} users  ${String(tally.calls).padStart(3)} calls  ${String(tally.itemsRead).padStart(5)} items read  ${tally.capacity ? `${tally.capacity.toFixed(1)} RCU  ` : ''}${ms.toFixed(1)} ms  first ${result.users[0]?.name}`,
    );
    return result;
  };
  const first = await measure('page 1 (per_page 50)', { page: 1, perPage: 50 });
  await measure('page 50 by number, first visit', { page: 50, perPage: 50 });
  await measure('page 50 by number, again (anchored)', { page: 50, perPage: 50 });
  await measure('page 37 by number (anchored on the way)', { page: 37, perPage: 50 });
  let token = first.meta.next_page_token;
  for (let page = 2; page < 50 && token; page++) {
    token = (
      await listUsersByRole(
        { orgId: org.id, role: 'OrgDriver', sortBy: 'name', order: 'asc' },
        { page, perPage: 50, pageToken: token },
      )
    ).meta.next_page_token;
  }
  await measure('page 50 by page_token', { page: 50, perPage: 50, pageToken: token! });
  const { getUser, updateUser } = await import('#shared/accounts/users');
  const renamed = (await getUser(first.users[0]!.id))!;
  await updateUser(renamed, { name: 'Zz renamed driver' });
  await measure('page 50 after a rename (re-anchors)', { page: 50, perPage: 50 });
  await measure('page 50 again', { page: 50, perPage: 50 });
  console.log('totals and listing versions come from a maintained counter (one GetItem), never from reading the users');
}
