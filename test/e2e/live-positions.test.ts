/**
 * Live positions over real WebSocket frames: an L1 fix reaches `org.<driver's org>` as a `driver.location` event
 * through the locations table's stream (the host polls the emulator's stream and runs the cloud's handler), never
 * another organisation's channel; a freelance driver's fix reaches only `drivers.freelance`, which only SysAdmin may
 * join; one batch holds each moved driver once, at its newest version.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import {
  type Client,
  client,
  clientCredentialsToken,
  freelanceDriver,
  invitedMember,
  loginAs,
  newOrganisation,
} from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let orgA: string;
let orgB: string;

type Frame = { type: string; channel?: string; channels?: string[]; name?: string; data?: { drivers?: Driver[] } };
type Driver = { user_id: string; latitude: number; longitude: number; version: number; server_time: string };

async function subscribed(token: string, channels: string[]) {
  const socket = new WebSocket(`${host.url.replace('http', 'ws')}/ws?token=${token}`);
  const frames: Frame[] = [];
  socket.on('message', (data) => frames.push(JSON.parse(data.toString()) as Frame));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ action: 'subscribe', channels }));
  await until(() => frames.some((f) => f.type === 'subscribed'));
  const positions = () =>
    frames.filter((f) => f.type === 'event' && f.name === 'driver.location').flatMap((f) => f.data?.drivers ?? []);
  return { socket, frames, positions };
}

async function until(done: () => boolean, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return done();
}

const fix = (latitude: number, longitude: number, secondsAgo = 0) => ({
  latitude,
  longitude,
  altitude: 3,
  client_time_utc: new Date(Date.now() - secondsAgo * 1000).toISOString(),
});

const newFreelanceDriver = () => freelanceDriver(api, 'live');

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  orgA = await newOrganisation(api, admin, 'Fleet A');
  orgB = await newOrganisation(api, admin, 'Fleet B');
});
afterAll(() => host?.stop());

describe('live positions', () => {
  it("deliver an organisation's moved drivers to its channel only, coalesced per batch", async () => {
    const dispatcherA = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, orgA);
    const dispatcherB = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, orgB);
    const driverA = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, orgA);
    const watchA = await subscribed(dispatcherA.token, [`org.${orgA}`]);
    const watchB = await subscribed(dispatcherB.token, [`org.${orgB}`]);
    const sysadmin = await subscribed(admin, ['drivers.freelance']);

    // Three fixes in quick succession: the batch that carries them shows the driver once, at the newest version.
    for (const [i, lat] of [1.3, 1.31, 1.32].entries()) {
      expect((await api.put('/v1/driver/location', fix(lat, 103.8, 10 - i), driverA.token)).status).toBe(200);
    }
    expect(await until(() => watchA.positions().some((d) => d.version === 3))).toBe(true);
    const frames = watchA.frames.filter((f) => f.name === 'driver.location');
    for (const frame of frames) {
      expect(frame.channel).toBe(`org.${orgA}`);
      const ids = frame.data!.drivers!.map((d) => d.user_id);
      expect(new Set(ids).size).toBe(ids.length);
    }
    const newest = watchA.positions().find((d) => d.version === 3)!;
    expect(newest).toEqual({
      user_id: driverA.id,
      latitude: 1.32,
      longitude: 103.8,
      altitude: 3,
      client_time_utc: expect.any(String),
      server_time: expect.any(String),
      version: 3,
    });

    // A later batch (a fix of B's driver, shown to B) proves A's batch was fanned out in full: B's dispatcher and the
    // freelance channel saw nothing of A (whatever the stream's batching window).
    const driverB = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, orgB);
    expect((await api.put('/v1/driver/location', fix(1.4, 103.9), driverB.token)).status).toBe(200);
    expect(await until(() => watchB.positions().some((d) => d.user_id === driverB.id))).toBe(true);
    expect(watchB.positions().map((d) => d.user_id)).toEqual([driverB.id]);
    expect(sysadmin.positions()).toEqual([]);
    for (const w of [watchA, watchB, sysadmin]) w.socket.close();
  });

  it("send a freelance driver's fix to drivers.freelance only, which only SysAdmin may join", async () => {
    const dispatcherA = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, orgA);
    const freelancer = await newFreelanceDriver();
    const watchA = await subscribed(dispatcherA.token, [`org.${orgA}`, 'drivers.freelance']);
    // The refusals follow the `subscribed` frame: wait for them too.
    expect(await until(() => watchA.frames.length >= 2)).toBe(true);
    expect(watchA.frames).toContainEqual({ type: 'subscribed', channels: [`org.${orgA}`] });
    expect(watchA.frames).toContainEqual({ type: 'error', code: 'forbidden', channel: 'drivers.freelance' });
    const self = await subscribed(freelancer.bearer_token, ['drivers.freelance']);
    expect(await until(() => self.frames.length >= 2)).toBe(true);
    expect(self.frames).toContainEqual({ type: 'error', code: 'forbidden', channel: 'drivers.freelance' });
    const sysadmin = await subscribed(admin, ['drivers.freelance']);

    expect((await api.put('/v1/driver/location', fix(51.5, -0.12), freelancer.bearer_token)).status).toBe(200);
    expect(await until(() => sysadmin.positions().some((d) => d.user_id === freelancer.user.id))).toBe(true);
    expect(sysadmin.frames.find((f) => f.name === 'driver.location')?.channel).toBe('drivers.freelance');
    // A later batch (a fix of an A driver, shown to A) proves the freelancer's was fanned out in full.
    const driverA = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, orgA);
    expect((await api.put('/v1/driver/location', fix(1.3, 103.8), driverA.token)).status).toBe(200);
    expect(await until(() => watchA.positions().some((d) => d.user_id === driverA.id))).toBe(true);
    expect(watchA.positions().map((d) => d.user_id)).toEqual([driverA.id]);
    expect(self.positions()).toEqual([]);
    for (const w of [watchA, self, sysadmin]) w.socket.close();
  });
});

describe('live positions of a driver moved into an organisation (the item keyed by organisation)', () => {
  it("reach the organisation's channel from the new key, the freelance channel no more", async () => {
    const org = await newOrganisation(api, admin, 'Fleet joined');
    const dispatcher = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    const freelancer = await newFreelanceDriver();
    const watch = await subscribed(dispatcher.token, [`org.${org}`]);
    const sysadmin = await subscribed(admin, ['drivers.freelance']);
    expect((await api.put('/v1/driver/location', fix(51.5, -0.12, 20), freelancer.bearer_token)).status).toBe(200);
    expect(await until(() => sysadmin.positions().some((d) => d.user_id === freelancer.user.id))).toBe(true);
    const assigned = await api.post(
      '/v1/admin/users/assign-organisation',
      { user: { id: freelancer.user.id, org_id: org } },
      admin,
    );
    expect(assigned.status).toBe(200);
    // The token was minted before the move (no organisation in it): the fix still reaches the organisation.
    expect((await api.put('/v1/driver/location', fix(51.51, -0.12, 10), freelancer.bearer_token)).status).toBe(200);
    expect(await until(() => watch.positions().some((d) => d.latitude === 51.51))).toBe(true);
    expect(watch.frames.filter((f) => f.name === 'driver.location').every((f) => f.channel === `org.${org}`)).toBe(
      true,
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(sysadmin.positions().map((d) => d.latitude)).toEqual([51.5]);
    for (const w of [watch, sysadmin]) w.socket.close();
  });
});

describe("an organisation's drivers and partners (issue 33.2)", () => {
  it('are refused org. and planning. channels and hear no colleague’s position', async () => {
    const org = await newOrganisation(api, admin, 'Fleet private');
    const dispatcher = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    const colleague = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    const partner = await api.post<{ client_key: string; secret_key: string }>(
      '/v1/admin/partner-authorizations',
      { name: 'Fleet TMS', webhook_url: 'https://tms.fleet.example/hook', org_id: org },
      admin,
    );
    expect(partner.status).toBe(201);
    const partnerToken = await clientCredentialsToken(api, partner.body.client_key, partner.body.secret_key);
    const planning = (await api.post<{ id: string }>('/v1/plannings', { name: 'Private' }, dispatcher.token)).body.id;
    const shared = [`org.${org}`, `planning.${planning}`];

    const watch = await subscribed(dispatcher.token, shared);
    expect(watch.frames).toEqual([{ type: 'subscribed', channels: shared }]);
    const listeners = [
      await subscribed(driver.token, [`user.${driver.id}`, ...shared]),
      await subscribed(partnerToken, shared),
    ];
    expect(await until(() => listeners.every((l) => l.frames.length >= 3))).toBe(true);
    expect(listeners[0]!.frames).toEqual([
      { type: 'subscribed', channels: [`user.${driver.id}`] },
      ...shared.map((channel) => ({ type: 'error', code: 'forbidden', channel })),
    ]);
    expect(listeners[1]!.frames).toEqual([
      { type: 'subscribed', channels: [] },
      ...shared.map((channel) => ({ type: 'error', code: 'forbidden', channel })),
    ]);

    expect((await api.put('/v1/driver/location', fix(1.35, 103.85), colleague.token)).status).toBe(200);
    expect(await until(() => watch.positions().some((d) => d.user_id === colleague.id))).toBe(true);
    for (const listener of listeners) expect(listener.positions()).toEqual([]);
    for (const w of [watch, ...listeners]) w.socket.close();
  });
});
