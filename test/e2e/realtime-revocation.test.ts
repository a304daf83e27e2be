/**
 * Issue 28.3: WebSocket connections do not outlive their token. Over real WebSocket frames against the local host: a
 * socket whose user is then deleted (A17), logs out everywhere (X6 without a refresh token) or whose bearer token
 * expires gets no more deliveries (N1, live positions), is refused a subscribe with `token_revoked` or
 * `token_expired`, and is closed by the server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { issueBearerToken } from '../../shared/auth/tokens.ts';
import { resetClock, setClock } from '../../shared/clock.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { openSocket } from '../support/sockets.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let org: string;

/** A socket as the support module opens it, with `subscribe` answering the frames it brought and `events()` all events. */
async function connect(token: string) {
  const opened = await openSocket(host.url, token);
  const isClosed = () => opened.closed.code !== undefined;
  const subscribe = async (channels: string[]) => {
    const before = opened.frames.length;
    opened.subscribe(channels);
    await opened.when(() => opened.frames.length > before || isClosed());
    return opened.frames.slice(before);
  };
  const events = () => opened.frames.filter((f) => f.type === 'event');
  return { ...opened, subscribe, events, isClosed };
}

type Socket = Awaited<ReturnType<typeof connect>>;
/** A driver's entry in a `driver.location` event. */
type Driven = { user_id: string; version: number };

const push = async (channel: string) =>
  (await api.post<{ delivered: number }>('/v1/events', { events: [{ channel, name: 'probe', data: { n: 1 } }] }, admin))
    .body.delivered;

/**
 * A member of `org` with two sockets opened on its token: `watching`, subscribed to its user and organisation
 * channels (and shown to receive on them), and `idle`, connected but not subscribed yet.
 */
async function memberWithSockets(token?: string) {
  const member = await invitedMember(api, admin, 'Merchant', ROLES.Merchant, org);
  const bearer = token ?? member.token;
  const watching = await connect(bearer);
  const channels = [`user.${member.id}`, `org.${org}`];
  expect(await watching.subscribe(channels)).toEqual([{ type: 'subscribed', channels }]);
  const idle = await connect(bearer);
  expect(await push(`user.${member.id}`)).toBe(1);
  expect(await watching.when(() => watching.events().length === 1)).toBe(true);
  return { member, watching, idle, channels };
}

/** After revocation: nothing more delivered on either channel, subscribe refused with `code`, both sockets closed. */
async function expectCutOff(sockets: { member: { id: string }; watching: Socket; idle: Socket }, code: string) {
  const { member, watching, idle } = sockets;
  expect(await push(`user.${member.id}`)).toBe(0);
  expect(await push(`org.${org}`)).toBe(0);
  expect(await watching.when(() => watching.isClosed())).toBe(true);
  expect(watching.events()).toHaveLength(1);

  expect(await idle.subscribe([`user.${member.id}`, `org.${org}`])).toEqual([
    { type: 'error', code, message: expect.any(String) },
  ]);
  expect(await idle.when(() => idle.isClosed())).toBe(true);
  // Nothing was recorded for it: a later event finds no subscriber.
  expect(await push(`user.${member.id}`)).toBe(0);
  expect(idle.events()).toEqual([]);
}

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  org = await newOrganisation(api, admin, 'Shop R', 'merchant');
});
afterAll(() => host?.stop());
afterEach(() => resetClock());

describe('WebSocket connections and revocation (issue 28.3)', () => {
  it('a deleted user’s sockets get nothing more, cannot subscribe, and are closed', async () => {
    const sockets = await memberWithSockets();
    const deleted = await api.delete('/v1/admin/users', { user: { email: sockets.member.email } }, admin);
    expect(deleted.status).toBe(200);
    await expectCutOff(sockets, 'token_revoked');
  });

  it('a user who logs out everywhere (X6 without a refresh token): the same', async () => {
    const sockets = await memberWithSockets();
    expect((await api.post('/v1/auth/logout', {}, sockets.member.token)).status).toBe(200);
    await expectCutOff(sockets, 'token_revoked');
  });

  it('a socket whose bearer token expired: the same, with token_expired', async () => {
    // A token that expires a minute from now (issued 59 minutes "ago"), with the user's current generation.
    const probe = await invitedMember(api, admin, 'Merchant', ROLES.Merchant, org);
    const generation = (JSON.parse(Buffer.from(probe.token.split('.')[1]!, 'base64url').toString()) as { gen: number })
      .gen;
    setClock(() => Date.now() - (3600 - 60) * 1000);
    const shortLived = await issueBearerToken(
      { kind: 'user', id: probe.id, roles: ['Merchant'], orgId: org },
      generation,
    );
    resetClock();
    const watching = await connect(shortLived.bearer_token);
    const channels = [`user.${probe.id}`, `org.${org}`];
    expect(await watching.subscribe(channels)).toEqual([{ type: 'subscribed', channels }]);
    const idle = await connect(shortLived.bearer_token);
    expect(await push(`user.${probe.id}`)).toBe(1);
    expect(await watching.when(() => watching.events().length === 1)).toBe(true);

    // Two minutes on: the short-lived token has expired, SysAdmin's (an hour) has not.
    setClock(() => Date.now() + 120_000);
    await expectCutOff({ member: probe, watching, idle }, 'token_expired');
  });

  it('live positions stop at once for a deleted dispatcher, and go on for the others', async () => {
    const fleet = await newOrganisation(api, admin, 'Fleet R');
    const dispatcher = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, fleet);
    const colleague = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, fleet);
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, fleet);
    const watched = await connect(dispatcher.token);
    const control = await connect(colleague.token);
    expect(await watched.subscribe([`org.${fleet}`])).toEqual([{ type: 'subscribed', channels: [`org.${fleet}`] }]);
    expect(await control.subscribe([`org.${fleet}`])).toEqual([{ type: 'subscribed', channels: [`org.${fleet}`] }]);
    const fix = {
      latitude: 1.3,
      longitude: 103.8,
      altitude: 3,
      client_time_utc: new Date(Date.now() - 5000).toISOString(),
    };
    const versions = (socket: Socket) =>
      socket
        .events()
        .flatMap((f) => ((f.data?.['drivers'] as Driven[] | undefined) ?? []).filter((d) => d.user_id === driver.id))
        .map((d) => d.version);

    expect((await api.put('/v1/driver/location', fix, driver.token)).status).toBe(200);
    expect(await watched.when(() => versions(watched).includes(1) && versions(control).includes(1))).toBe(true);

    expect((await api.delete('/v1/admin/users', { user: { email: dispatcher.email } }, admin)).status).toBe(200);
    expect(
      (
        await api.put(
          '/v1/driver/location',
          { ...fix, latitude: 1.31, client_time_utc: new Date().toISOString() },
          driver.token,
        )
      ).status,
    ).toBe(200);
    expect(await control.when(() => versions(control).includes(2))).toBe(true);
    expect(await watched.when(() => watched.isClosed())).toBe(true);
    expect(versions(watched)).toEqual([1]);
    control.socket.close();
  });
});
