/**
 * A wave sent to a driver who won their last runsheet while the sweep was judging (contract 4.7): the wave worker
 * reads the drivers' facts once per sweep, so a driver who wins in between can still be chosen. That offer is closed
 * at once (`driver_at_capacity`), as the accept closes the driver's other offers, and the runsheet moves on instead
 * of waiting for the offer to expire. Found by bench/dispatch-day.ts. The sweep's parts report their DynamoDB units
 * under their own labels (`sweep:waves`), as requests do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import { type Tally, tallyObservers } from '../../shared/db/capacity.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { withMiddleware } from '../support/middleware.ts';
import { until } from '../support/until.ts';

let host: RunningHost;
let api: Client;
let admin: string;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
}, 60_000);
afterAll(() => host?.stop());

type Status = { action: string; reason: string | null };
type Pair = {
  id: string;
  pair: { runsheet: { id: string }; driver: { id: string } };
  statuses: Status[];
  current_state: string;
};
type Runsheet = { id: string; status: string; unassigned_reason?: { code: string } };

describe('a wave to a driver who has just won their last runsheet', () => {
  it('closes that offer as driver_at_capacity and moves the runsheet on; the sweep tallies its waves', async () => {
    const org = (
      await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Wave capacity', kind: 'transporter' }, admin)
    ).body.id;
    const member = (role: Role) => invitedMember(api, admin, role, ROLES[role], org);
    const planner = await member('OrgAdmin');
    // d1 stands at RS-A's pickup, d2 at RS-B's: wave 1 offers RS-A to d1 and RS-B to d2.
    const [d1, d2] = [await member('OrgDriver'), await member('OrgDriver')];
    for (const [i, driver] of [d1, d2].entries()) {
      const fix = { latitude: 1.3 + i / 50, longitude: 103.8, client_time_utc: new Date().toISOString() };
      expect((await api.put('/v1/driver/location', fix, driver.token)).status).toBe(200);
    }
    const planning = (await api.post<{ id: string }>('/v1/plannings', { name: 'Capacity race' }, planner.token)).body
      .id;
    await api.post(
      `/v1/plannings/${planning}/runsheets`,
      {
        runsheets: ['RS-A', 'RS-B'].map((id, i) => ({
          id,
          tasks: [{ id: `t-${id}`, from_address: { latitude: 1.3 + i / 50, longitude: 103.8 } }],
        })),
      },
      planner.token,
    );
    const ready = await api.post<{ version_rev: string }>(
      `/v1/plannings/${planning}/drivers`,
      { drivers: [d1, d2].map((d) => ({ id: d.id })) },
      planner.token,
    );
    const started = await api.post(
      `/v1/plannings/${planning}/job`,
      { version_rev: ready.body.version_rev, max_candidates: 1, offer_ttl_s: 120, max_waves: 3 },
      planner.token,
    );
    expect(started.status).toBe(202);
    const pairs = async () =>
      (await api.get<{ pair_records: Pair[] }>(`/v1/broadcast-plans/${planning}/pairs`, planner.token)).body
        .pair_records;
    const first = await until(pairs, (all) => all.length === 2);
    const offerOf = (all: Pair[], runsheet: string, driver: string) =>
      all.find((p) => p.pair.runsheet.id === runsheet && p.pair.driver.id === driver);
    const a1 = offerOf(first, 'RS-A', d1.id)!;
    const b2 = offerOf(first, 'RS-B', d2.id)!;
    expect([a1.current_state, b2.current_state]).toEqual(['broadcasted', 'broadcasted']);

    const tallies: { label: string; tally: Tally }[] = [];
    const observer = (tally: Tally, label: string) => tallies.push({ label, tally });
    tallyObservers.add(observer);
    // d2 declines RS-B: its wave 2 can only go to d1. Just before the worker claims that wave (its facts read, d1 with
    // no runsheet yet), d1 accepts RS-A, their last runsheet of the planning.
    let accepted: number | undefined;
    const after = await withMiddleware(
      'win-before-wave',
      (next, context) => async (args) => {
        const input = JSON.stringify(args.input);
        if (
          accepted === undefined &&
          context.commandName?.startsWith('Update') &&
          input.includes('RSPAIRS#RS-B') &&
          input.includes(':pending')
        ) {
          accepted = 0;
          accepted = (
            await api.post(
              `/v1/broadcast-plans/${planning}/pairs/${a1.id}/accepted`,
              { happened_at_utc: new Date().toISOString() },
              d1.token,
            )
          ).status;
        }
        return next(args);
      },
      async () => {
        const declined = await api.post(
          `/v1/broadcast-plans/${planning}/pairs/${b2.id}/rejected`,
          { happened_at_utc: new Date().toISOString() },
          d2.token,
        );
        expect(declined.status).toBe(200);
        return until(pairs, (all) => offerOf(all, 'RS-B', d1.id)?.current_state === 'rejected', 15_000);
      },
    );
    tallyObservers.delete(observer);
    expect(accepted).toBe(200);
    const b1 = offerOf(after, 'RS-B', d1.id);
    expect(b1?.current_state).toBe('rejected');
    expect(b1?.statuses.map((s) => [s.action, s.reason])).toEqual([
      ['created', null],
      ['broadcast', 'wave 2'],
      ['system_rejected', 'driver_at_capacity'],
    ]);
    // Nobody is left who may be offered RS-B (d2 declined it, d1 has their runsheet): it is unassigned now, not when
    // d1's offer would have expired.
    const runsheets = await until(
      async () =>
        (await api.get<{ runsheets: Runsheet[] }>(`/v1/plannings/${planning}/runsheets`, planner.token)).body.runsheets,
      (all) => all.find((r) => r.id === 'RS-B')?.status === 'unassigned',
      15_000,
    );
    expect(runsheets.find((r) => r.id === 'RS-B')).toMatchObject({
      status: 'unassigned',
      unassigned_reason: { code: 'no_driver_accepted' },
    });
    expect(runsheets.find((r) => r.id === 'RS-A')?.status).toBe('assigned');
    // The sweep that sent wave 2 reported its units: the claim and the pair written at least.
    const waves = tallies.filter((t) => t.label === 'sweep:waves' && t.tally.wcu > 0);
    expect(waves.length).toBeGreaterThan(0);
  }, 60_000);
});
