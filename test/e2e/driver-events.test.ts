/**
 * A driver's own offers over real WebSocket frames (issue 33.2, contract 4.3): the planning job's broadcast reaches
 * each driver on `user.<id>` as `offer.new`; an offer the system closes (taken by another driver, expired) as
 * `offer.closed` with its reason; the winner's accept as `runsheet.assigned`. The planning's channel is the
 * dispatchers', never the drivers'. A redelivered event (the same accept sent again) carries the same frame id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import { resetClock, setClock } from '../../shared/clock.ts';
import { expireOffers } from '../../shared/planning/offer-expiry.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { openSocket } from '../support/sockets.ts';

let host: RunningHost;
let api: Client;
let admin: string;

/** A socket subscribed to `channels` (its `subscribed` answer received). */
async function listen(token: string, channels: string[]) {
  const opened = await openSocket(host.url, token);
  opened.subscribe(channels);
  expect(await opened.when(() => opened.frames.some((f) => f.type === 'subscribed'))).toBe(true);
  return opened;
}

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
});
afterAll(() => host?.stop());

describe('a driver’s offers on user.<id> (issue 33.2)', () => {
  it('offer.new on broadcast, offer.closed with its reason, runsheet.assigned to the winner, the same id again on a retried accept', async () => {
    const org = (
      await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Driver events', kind: 'transporter' }, admin)
    ).body.id;
    const member = (role: Role) => invitedMember(api, admin, role, ROLES[role], org);
    const planner = await member('OrgAdmin');
    const drivers = [await member('OrgDriver'), await member('OrgDriver')];
    for (const [i, driver] of drivers.entries()) {
      const fix = { latitude: 1.3 + i / 100, longitude: 103.8, client_time_utc: new Date().toISOString() };
      expect((await api.put('/v1/driver/location', fix, driver.token)).status).toBe(200);
    }
    const planning = (await api.post<{ id: string }>('/v1/plannings', { name: 'Events day' }, planner.token)).body.id;
    await api.post(
      `/v1/plannings/${planning}/runsheets`,
      {
        runsheets: ['RS-1', 'RS-2'].map((id, i) => ({
          id,
          tasks: [{ id: `t-${id}`, from_address: { city: 'Singapore', latitude: 1.3 + i / 100, longitude: 103.8 } }],
        })),
      },
      planner.token,
    );
    const ready = await api.post<{ version_rev: string }>(
      `/v1/plannings/${planning}/drivers`,
      { drivers: drivers.map((d) => ({ id: d.id })) },
      planner.token,
    );

    const dispatcher = await listen(planner.token, [`planning.${planning}`]);
    expect(dispatcher.frames).toEqual([{ type: 'subscribed', channels: [`planning.${planning}`] }]);
    const ears = [];
    for (const driver of drivers) {
      const ear = await listen(driver.token, [`user.${driver.id}`, `planning.${planning}`, `org.${org}`]);
      expect(await ear.when(() => ear.frames.length >= 3)).toBe(true);
      expect(ear.frames).toEqual([
        { type: 'subscribed', channels: [`user.${driver.id}`] },
        { type: 'error', code: 'forbidden', channel: `planning.${planning}` },
        { type: 'error', code: 'forbidden', channel: `org.${org}` },
      ]);
      ears.push(ear);
    }

    const started = await api.post(
      `/v1/plannings/${planning}/job`,
      { version_rev: ready.body.version_rev, max_candidates: 2, offer_ttl_s: 60 },
      planner.token,
    );
    expect(started.status).toBe(202);
    for (const ear of ears) expect(await ear.when(() => ear.events('offer.new').length >= 2)).toBe(true);
    const offers = ears.map((ear, i) => {
      const news = ear.events('offer.new');
      for (const frame of news) {
        expect(frame).toEqual({
          type: 'event',
          channel: `user.${drivers[i]!.id}`,
          name: 'offer.new',
          id: expect.stringMatching(/^evt_[0-9a-f]{24}$/),
          data: {
            pair_id: expect.any(String),
            planning_id: planning,
            runsheet_id: expect.any(String),
            expired_time: expect.any(String),
          },
        });
      }
      return new Map(news.map((f) => [f.data!['runsheet_id'] as string, f.data!['pair_id'] as string]));
    });
    expect(offers.map((o) => [...o.keys()].sort())).toEqual([
      ['RS-1', 'RS-2'],
      ['RS-1', 'RS-2'],
    ]);
    // Nobody hears another driver's offers.
    expect([...offers[0]!.values()].filter((id) => [...offers[1]!.values()].includes(id))).toEqual([]);

    // Driver 0 takes RS-1; its app retries the same accept (as after a 503): both answered, the events sent twice.
    const accept = { happened_at_utc: new Date().toISOString() };
    for (let i = 0; i < 2; i++) {
      const answer = await api.post(
        `/v1/broadcast-plans/${planning}/pairs/${offers[0]!.get('RS-1')}/accepted`,
        accept,
        drivers[0]!.token,
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
    const [winner, loser] = ears as [(typeof ears)[0], (typeof ears)[0]];
    expect(await winner.when(() => winner.events('runsheet.assigned').length >= 2)).toBe(true);
    const assigned = winner.events('runsheet.assigned');
    expect(assigned[0]).toMatchObject({
      channel: `user.${drivers[0]!.id}`,
      data: { pair_id: offers[0]!.get('RS-1'), planning_id: planning, runsheet_id: 'RS-1' },
    });
    expect(assigned[1]).toEqual(assigned[0]);
    expect(await dispatcher.when(() => dispatcher.events('pair.accepted').length >= 2)).toBe(true);
    const [acceptedOnce, acceptedAgain] = dispatcher.events('pair.accepted');
    expect(acceptedAgain!.id).toBe(acceptedOnce!.id);
    expect(acceptedOnce!.id).not.toBe(assigned[0]!.id);

    expect(await loser.when(() => loser.events('offer.closed').length >= 1)).toBe(true);
    expect(loser.events('offer.closed')).toEqual([
      {
        type: 'event',
        channel: `user.${drivers[1]!.id}`,
        name: 'offer.closed',
        id: expect.stringMatching(/^evt_/),
        data: {
          pair_id: offers[1]!.get('RS-1'),
          planning_id: planning,
          runsheet_id: 'RS-1',
          reason: 'assigned_to_other_driver',
        },
      },
    ]);

    // The winner holds as many runsheets as one driver may (max_runsheets_per_driver, 1): their offer of RS-2 is
    // closed at once, and they are told why (contract 4.7).
    expect(await winner.when(() => winner.events('offer.closed').length >= 1)).toBe(true);
    expect(winner.events('offer.closed')).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({
          pair_id: offers[0]!.get('RS-2'),
          runsheet_id: 'RS-2',
          reason: 'driver_at_capacity',
        }),
      }),
    ]);
    // RS-2's other offer expires (the service's clock two minutes on, the sweep run): its driver is told why.
    const later = Date.now() + 120_000;
    setClock(() => later);
    try {
      await expireOffers();
    } finally {
      resetClock();
    }
    expect(await loser.when(() => loser.events('offer.closed').some((f) => f.data!['reason'] === 'expired'))).toBe(
      true,
    );
    // The host's own sweep (every two seconds, on the same shifted clock) may record the same expiry at the same
    // moment: the loser of that race sends the effects again, with the same event id (contract 4.3: "stable across
    // redelivery", a client de-duplicates by it). One event, however often it was delivered.
    const expiredOnce = new Map(
      loser.events('offer.closed').flatMap((f) => (f.data!['reason'] === 'expired' ? [[f.id, f] as const] : [])),
    );
    expect([...expiredOnce.values()]).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ pair_id: offers[1]!.get('RS-2'), runsheet_id: 'RS-2' }),
      }),
    ]);
    // The winner's own accept closed nothing of theirs but the offer past their limit: no offer.closed for RS-1.
    expect(winner.events('offer.closed').map((f) => f.data!['runsheet_id'])).toEqual(['RS-2']);
    for (const socket of [dispatcher, ...ears]) socket.socket.close();
  });
});
