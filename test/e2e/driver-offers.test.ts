/**
 * X12: a driver's own offers, whatever device they have. A planning job offers three runsheets to two drivers; each
 * driver lists their own pair records, open ones first by expiry; after an accept and a reject, the default list
 * holds only what is still open and `state=all` adds the history; pages walk by token; nobody sees another's offers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let planner: string;
let planning: string;
const drivers: { id: string; token: string }[] = [];

type Offer = {
  id: string;
  current_state: string;
  pair: { runsheet: { id: string; tasks: { id: string }[] }; driver: { id: string } };
  plan: { id: string };
  statuses: { action: string; expired_time: string | null }[];
};
type OfferList = { offers: Offer[]; meta: { next_page_token: string | null } };

const offersOf = (token: string, query = '') => api.get<OfferList>(`/v1/driver/offers${query}`, token);

async function walk(token: string, query: string): Promise<Offer[]> {
  const all: Offer[] = [];
  let next: string | null = null;
  let pages = 0;
  do {
    const page = await offersOf(token, `${query}&per_page=1${next ? `&page_token=${encodeURIComponent(next)}` : ''}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body.offers.length).toBeLessThanOrEqual(1);
    all.push(...page.body.offers);
    next = page.body.meta.next_page_token;
    pages++;
  } while (next && pages < 20);
  return all;
}

const expiry = (offer: Offer) => offer.statuses.findLast((s) => s.action === 'broadcast')!.expired_time!;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = (
    await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Offers', kind: 'transporter' }, admin)
  ).body.id;
  const member = (role: Role) => invitedMember(api, admin, role, ROLES[role], org);
  planner = (await member('OrgAdmin')).token;
  for (const [i, position] of [
    [1.3, 103.8],
    [1.31, 103.81],
  ].entries()) {
    const driver = await member('OrgDriver');
    drivers.push({ id: driver.id, token: driver.token });
    await api.put(
      '/v1/driver/location',
      {
        latitude: position[0],
        longitude: position[1],
        client_time_utc: new Date(Date.now() - i).toISOString(),
        client_timezone: 'Asia/Singapore',
      },
      driver.token,
    );
  }
  planning = (await api.post<{ id: string }>('/v1/plannings', { name: 'Offers day' }, planner)).body.id;
  const pickup = (lat: number) => ({ city: 'Singapore', latitude: lat, longitude: 103.8 });
  await api.post(
    `/v1/plannings/${planning}/runsheets`,
    {
      runsheets: ['RS-1', 'RS-2', 'RS-3'].map((id, i) => ({
        id,
        tasks: [{ id: `t-${id}`, from_address: pickup(1.3 + i / 100) }],
      })),
    },
    planner,
  );
  const withDrivers = await api.post<{ version_rev: string }>(
    `/v1/plannings/${planning}/drivers`,
    { drivers: drivers.map((d) => ({ id: d.id })) },
    planner,
  );
  const started = await api.post(
    `/v1/plannings/${planning}/job`,
    // A driver may hold all three runsheets: a win does not close their other offers (driver_at_capacity), so the
    // lists below show each answer as the driver gave it.
    { version_rev: withDrivers.body.version_rev, max_candidates: 2, offer_ttl_s: 3600, max_runsheets_per_driver: 3 },
    planner,
  );
  expect(started.status).toBe(202);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = await api.get<{ current_status: string }>(`/v1/plannings/${planning}/job/status`, planner);
    if (status.body.current_status === 'completed') break;
    if (Date.now() > deadline) throw new Error(`planning job ${status.body.current_status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}, 120_000);
afterAll(() => host?.stop());

describe('X12: a driver’s own offers', () => {
  it('lists each driver’s own open offers, soonest to expire first, with their runsheets', async () => {
    for (const driver of drivers) {
      const mine = await offersOf(driver.token);
      expect(mine.status).toBe(200);
      expect(mine.body.offers.map((o) => o.pair.runsheet.id).sort()).toEqual(['RS-1', 'RS-2', 'RS-3']);
      expect(mine.body.offers.every((o) => o.pair.driver.id === driver.id && o.current_state === 'broadcasted')).toBe(
        true,
      );
      expect(mine.body.offers.every((o) => o.plan.id === planning && o.pair.runsheet.tasks.length === 1)).toBe(true);
      const expiries = mine.body.offers.map(expiry);
      expect(expiries).toEqual([...expiries].sort());
      for (const offer of mine.body.offers) expect(offer).not.toHaveProperty('GSI2PK');
    }
  });

  it('keeps answered offers out of the default list and shows them after the open ones with state=all', async () => {
    const [me] = drivers;
    const open = (await offersOf(me!.token)).body.offers;
    const accept = open.find((o) => o.pair.runsheet.id === 'RS-1')!;
    const reject = open.find((o) => o.pair.runsheet.id === 'RS-2')!;
    const at = new Date().toISOString();
    expect(
      (
        await api.post(
          `/v1/broadcast-plans/${planning}/pairs/${accept.id}/accepted`,
          { happened_at_utc: at },
          me!.token,
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await api.post(
          `/v1/broadcast-plans/${planning}/pairs/${reject.id}/rejected`,
          { happened_at_utc: at },
          me!.token,
        )
      ).status,
    ).toBe(200);
    const still = (await offersOf(me!.token, '?state=broadcasted')).body.offers;
    expect(
      still.map((o) => o.pair.runsheet.id),
      JSON.stringify(still.map((o) => [o.pair.runsheet.id, o.current_state])),
    ).toEqual(['RS-3']);
    const all = await walk(me!.token, '?state=all');
    expect(
      all.map((o) => o.pair.runsheet.id).slice(0, 1),
      JSON.stringify(all.map((o) => [o.pair.runsheet.id, o.current_state])),
    ).toEqual(['RS-3']);
    expect(
      all
        .slice(1)
        .map((o) => o.current_state)
        .sort(),
    ).toEqual(['accepted', 'rejected']);
    // The other driver lost RS-1 to the accept: closed by the system, in their history, not their open offers.
    const other = drivers[1]!;
    expect((await offersOf(other.token)).body.offers.map((o) => o.pair.runsheet.id).sort()).toEqual(['RS-2', 'RS-3']);
    const theirs = await walk(other.token, '?state=all');
    expect(theirs.map((o) => [o.pair.runsheet.id, o.current_state]).at(-1)).toEqual(['RS-1', 'rejected']);
  });

  it('answers a bad state with 400 and other roles with 403', async () => {
    const bad = await offersOf(drivers[0]!.token, '?state=open');
    expect(bad.status).toBe(400);
    expect((bad.body as unknown as { errors: { path: string }[] }).errors[0]!.path).toBe('query.state');
    expect((await offersOf(planner)).status).toBe(403);
    expect((await offersOf(drivers[0]!.token, '?page_token=forged')).status).toBe(400);
  });
});
