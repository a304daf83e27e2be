/**
 * Notifications over real WebSocket frames and HTTP: channel permissions, N1 and N5 reaching exactly the allowed
 * subscribers, the log (N2–N4), gone connections cleaned up, push keys and device push (N6–N10).
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { handler as defaultHandler } from '../../functions/realtime/default.ts';
import { handler as subscribeHandler } from '../../functions/realtime/subscribe.ts';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import { asFunction } from '../../shared/local-invocation.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { type Middleware, withMiddleware } from '../support/middleware.ts';
import { type Frame, openSocket } from '../support/sockets.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let orgX: string;
let orgY: string;
const _PASSWORD = 'a-good-long-password';
const _tag = Math.random().toString(36).slice(2, 7);

const member = async (role: Role, org: string) => {
  const { id, token } = await invitedMember(api, admin, role, ROLES[role], org);
  return { id, token };
};

/** A socket with `until(count)`: waits until `count` frames have arrived, and answers them. */
async function connect(token: string) {
  const opened = await openSocket(host.url, token);
  const until = async (count: number) => {
    await opened.when(() => opened.frames.length >= count);
    return opened.frames;
  };
  return { ...opened, until };
}

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  orgX = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Shop X', kind: 'merchant' }, admin)).body
    .id;
  orgY = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Fleet Y', kind: 'transporter' }, admin))
    .body.id;
});
afterAll(() => host?.stop());

/** A subscriber of `org.<orgY>` whose socket vanished without a $disconnect (a dropped network, say). */
async function vanishedSubscriber(connectionId: string) {
  const { db, connectionsTableName } = await import('../../shared/db/client.ts');
  const item = { channels: [`org.${orgY}`], expires_at: 9_999_999_999 };
  await db().send(
    new PutCommand({
      TableName: connectionsTableName(),
      Item: { PK: `CHAN#org.${orgY}`, SK: connectionId, expires_at: item.expires_at },
    }),
  );
  await db().send(
    new PutCommand({ TableName: connectionsTableName(), Item: { PK: `CONN#${connectionId}`, SK: 'CONN', ...item } }),
  );
}

describe('real-time channels', () => {
  it('grant own channels, refuse foreign ones, and deliver N1 and N5 to exactly the allowed subscribers', async () => {
    const merchant = await member('Merchant', orgX);
    const driver = await member('OrgDriver', orgY);
    const a = await connect(merchant.token);
    const b = await connect(driver.token);
    a.socket.send(
      JSON.stringify({
        action: 'subscribe',
        channels: [`user.${merchant.id}`, `org.${orgX}`, `org.${orgY}`, `user.${driver.id}`],
      }),
    );
    b.socket.send(JSON.stringify({ action: 'subscribe', channels: [`user.${driver.id}`, `org.${orgY}`] }));
    await a.until(3);
    await b.until(2);
    expect(a.frames[0]).toEqual({ type: 'subscribed', channels: [`user.${merchant.id}`, `org.${orgX}`] });
    expect(a.frames.slice(1)).toEqual([
      { type: 'error', code: 'forbidden', channel: `org.${orgY}` },
      { type: 'error', code: 'forbidden', channel: `user.${driver.id}` },
    ]);
    // A driver hears their own channel only, never the organisation's (contract 4.3, issue 33.2).
    expect(b.frames.slice(0, 2)).toEqual([
      { type: 'subscribed', channels: [`user.${driver.id}`] },
      { type: 'error', code: 'forbidden', channel: `org.${orgY}` },
    ]);

    const events = await api.post<{ code: string; delivered: number }>(
      '/v1/events',
      {
        events: [
          { channel: `org.${orgX}`, name: 'task.updated', data: { task: 1 } },
          { channel: `user.${driver.id}`, name: 'ping', data: { n: 2 } },
        ],
      },
      admin,
    );
    expect(events.status).toBe(202);
    expect(events.body).toMatchObject({ code: 'success', delivered: 2 });
    await a.until(4);
    await b.until(3);
    const id = expect.stringMatching(/^evt_[0-9a-f]{24}$/);
    expect(a.frames[3]).toEqual({
      type: 'event',
      channel: `org.${orgX}`,
      name: 'task.updated',
      data: { task: 1 },
      id,
    });
    expect(b.frames[2]).toEqual({ type: 'event', channel: `user.${driver.id}`, name: 'ping', data: { n: 2 }, id });

    const notified = await api.post<{ server_time: string }>(
      '/v1/notifications',
      {
        event_type: 'import.completed',
        event_data: { user_id: merchant.id, title: 'Import done', report: 's3://dispatch-uploads/reports/r1.csv' },
      },
      admin,
    );
    expect(notified.status).toBe(201);
    expect(notified.body.server_time).toMatch(/Z$/);
    await a.until(5);
    expect(a.frames[4]).toMatchObject({
      type: 'event',
      channel: `user.${merchant.id}`,
      name: 'import.completed',
      data: { title: 'Import done' },
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(b.frames).toHaveLength(3);

    a.socket.send('not json');
    await a.until(6);
    expect(a.frames[5]).toMatchObject({ type: 'error', code: 'unknown_action' });
    a.socket.close();
    b.socket.close();
  });

  it('refuses a connection without a valid token', async () => {
    await expect(connect('not-a-token')).rejects.toThrow('refused with 401');
  });

  it('removes a connection that is gone on the first failed delivery', async () => {
    const { db, connectionsTableName } = await import('../../shared/db/client.ts');
    // A subscriber whose socket vanished without a $disconnect (a dropped network, say).
    await vanishedSubscriber('vanished-connection');
    const first = await api.post<{ delivered: number }>(
      '/v1/events',
      { events: [{ channel: `org.${orgY}`, name: 'x', data: {} }] },
      admin,
    );
    expect(first.body.delivered).toBe(0);
    const left = await db().send(
      new GetCommand({ TableName: connectionsTableName(), Key: { PK: `CHAN#org.${orgY}`, SK: 'vanished-connection' } }),
    );
    expect(left.Item).toBeUndefined();
    expect(
      (
        await db().send(
          new GetCommand({ TableName: connectionsTableName(), Key: { PK: 'CONN#vanished-connection', SK: 'CONN' } }),
        )
      ).Item,
    ).toBeUndefined();
  });

  it('forgets a connection that went away while its keepalive was being answered ($default, 410)', async () => {
    const { db, connectionsTableName } = await import('../../shared/db/client.ts');
    // The phone's ping reached $default, and its socket closed before the pong: the post answers 410 (gone).
    await vanishedSubscriber('pinged-then-gone');
    const answered = await asFunction('realtime/default', () =>
      defaultHandler({
        requestContext: { routeKey: '$default', eventType: 'MESSAGE', connectionId: 'pinged-then-gone' },
        body: JSON.stringify({ action: 'ping' }),
        isBase64Encoded: false,
      } as unknown as Parameters<typeof defaultHandler>[0]),
    );
    expect(answered).toEqual({ statusCode: 200 });
    for (const Key of [
      { PK: `CHAN#org.${orgY}`, SK: 'pinged-then-gone' },
      { PK: 'CONN#pinged-then-gone', SK: 'CONN' },
    ]) {
      expect((await db().send(new GetCommand({ TableName: connectionsTableName(), Key }))).Item).toBeUndefined();
    }
  });

  it('cleans up a closed connection: later events are not delivered to it', async () => {
    const merchant = await member('Merchant', orgX);
    const c = await connect(merchant.token);
    c.socket.send(JSON.stringify({ action: 'subscribe', channels: [`user.${merchant.id}`] }));
    await c.until(1);
    const before = await api.post<{ delivered: number }>(
      '/v1/events',
      { events: [{ channel: `user.${merchant.id}`, name: 'x', data: {} }] },
      admin,
    );
    expect(before.body.delivered).toBe(1);
    c.socket.close();
    await new Promise((r) => setTimeout(r, 200));
    const after = await api.post<{ delivered: number }>(
      '/v1/events',
      { events: [{ channel: `user.${merchant.id}`, name: 'x', data: {} }] },
      admin,
    );
    expect(after.body.delivered).toBe(0);
  });
});

describe('N1 within one WebSocket message (issue 42 item 10)', () => {
  it('refuses data no frame can carry with a 400 at its path, and delivers the largest that fits whole', async () => {
    const { MAX_EVENT_DATA_BYTES } = await import('../../shared/notifications/schemas.ts');
    const merchant = await member('Merchant', orgX);
    const c = await connect(merchant.token);
    c.socket.send(JSON.stringify({ action: 'subscribe', channels: [`user.${merchant.id}`] }));
    await c.until(1);
    const event = (data: unknown) => ({ channel: `user.${merchant.id}`, name: 'big', data });
    for (const bytes of [300 * 1024, 900 * 1024]) {
      const refused = await api.post<{ errors: { path: string; message: string }[] }>(
        '/v1/events',
        { events: [event({}), event({ blob: 'x'.repeat(bytes) })] },
        admin,
      );
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([
        {
          path: 'events[1].data',
          message: `must be at most ${MAX_EVENT_DATA_BYTES} bytes as JSON: its frame must fit one WebSocket message (128 KiB)`,
        },
      ]);
    }
    expect(c.frames).toHaveLength(1);
    // The largest data that fits: a JSON string of exactly MAX_EVENT_DATA_BYTES bytes, delivered whole.
    const largest = 'y'.repeat(MAX_EVENT_DATA_BYTES - 2);
    const pushed = await api.post<{ delivered: number }>('/v1/events', { events: [event(largest)] }, admin);
    expect(pushed.status).toBe(202);
    expect(pushed.body.delivered).toBe(1);
    const frames = await c.until(2);
    expect((frames[1] as Frame & { data: unknown }).data).toBe(largest);
  });

  it('the local gateway refuses a PostToConnection over 128 KiB as API Gateway does (413 PayloadTooLargeException)', async () => {
    const merchant = await member('Merchant', orgX);
    const c = await connect(merchant.token);
    c.socket.send(JSON.stringify({ action: 'subscribe', channels: [`user.${merchant.id}`] }));
    await c.until(1);
    const { db, connectionsTableName } = await import('../../shared/db/client.ts');
    const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
    const subscribed = await db().send(
      new QueryCommand({
        TableName: connectionsTableName(),
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `CHAN#user.${merchant.id}` },
      }),
    );
    const connectionId = String(subscribed.Items![0]!['SK']);
    const { sendFrame } = await import('../../shared/notifications/realtime.ts');
    const frame = (bytes: number) => ({ type: 'event', channel: 'c', name: 'n', data: 'z'.repeat(bytes), id: 'evt' });
    await expect(sendFrame(connectionId, frame(129 * 1024) as never)).rejects.toMatchObject({
      name: 'PayloadTooLargeException',
      $metadata: { httpStatusCode: 413 },
    });
    expect(await sendFrame(connectionId, frame(100 * 1024) as never)).toBe(true);
    const frames = await c.until(2);
    expect(frames).toHaveLength(2);
    expect(String((frames[1] as Frame & { data: unknown }).data)).toHaveLength(100 * 1024);
  });
});

describe('the notification log', () => {
  it('lists per organisation, marks read idempotently, and presigns links for one entry', async () => {
    const merchant = await member('Merchant', orgX);
    const otherMerchant = await member('Merchant', orgY);
    const started = new Date().toISOString();
    await api.post(
      '/v1/notifications',
      {
        event_type: 'a',
        event_data: { user_id: merchant.id, title: 'First', file: 's3://dispatch-uploads/uploads/x/report.csv' },
      },
      admin,
    );
    await api.post(
      '/v1/notifications',
      { event_type: 'b', event_data: { user_id: merchant.id, title: 'Second' } },
      admin,
    );
    type List = {
      notifications: { id: string; event_type: string; event_data: Record<string, unknown>; is_read: boolean }[];
      meta: Record<string, unknown>;
    };
    const listed = await api.get<List>(
      `/v1/notifications?range_start_created_at=${encodeURIComponent(started)}`,
      merchant.token,
    );
    expect(listed.status).toBe(200);
    expect(listed.body.notifications.map((n) => n.event_type)).toEqual(['b', 'a']);
    expect(listed.body.notifications[1]!.event_data['file']).toBe('s3://dispatch-uploads/uploads/x/report.csv');
    expect(listed.body.meta).toMatchObject({ range_start_created_at: started, range_end_created_at: null });
    const ascending = await api.get<List>(
      `/v1/notifications?order=asc&range_start_created_at=${encodeURIComponent(started)}`,
      merchant.token,
    );
    expect(ascending.body.notifications.map((n) => n.event_type)).toEqual(['a', 'b']);
    expect(
      (await api.get<List>('/v1/notifications', otherMerchant.token)).body.notifications.map((n) => n.event_type),
    ).not.toContain('a');

    const id = listed.body.notifications[1]!.id;
    for (let i = 0; i < 2; i++) {
      const read = await api.post(`/v1/notifications/${id}/read`, {}, merchant.token);
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ message: expect.any(String), server_time: expect.any(String) });
    }
    expect((await api.post(`/v1/notifications/${id}/read`, {}, otherMerchant.token)).status).toBe(404);
    const one = await api.get<{ is_read: boolean; event_data: { file: string } }>(
      `/v1/notifications/${id}`,
      merchant.token,
    );
    expect(one.body.is_read).toBe(true);
    const url = new URL(one.body.event_data.file);
    expect(url.pathname).toBe('/dispatch-uploads/uploads/x/report.csv');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses bad ranges, orders and callers', async () => {
    const range = await api.get(
      '/v1/notifications?range_start_created_at=2026-02-01T00:00:00Z&range_end_created_at=2026-01-01T00:00:00Z',
      admin,
    );
    expect(range.body).toMatchObject({ status: 400, errors: [{ path: 'query.range_start_created_at' }] });
    expect((await api.get('/v1/notifications?order=sideways', admin)).body).toMatchObject({
      status: 400,
      errors: [{ path: 'query.order' }],
    });
    const driver = await member('OrgDriver', orgY);
    expect((await api.get('/v1/notifications', driver.token)).status).toBe(403);
    expect(
      (
        await api.post(
          '/v1/notifications',
          { event_type: 'x', event_data: { user_id: '00000000-0000-4000-8000-000000000000', title: 't' } },
          admin,
        )
      ).body,
    ).toMatchObject({ status: 400, errors: [{ path: 'event_data.user_id' }] });
    expect(
      (await api.post('/v1/notifications', { event_type: 'x', event_data: { title: 't' } }, admin)).body,
    ).toMatchObject({ status: 400, errors: [{ path: 'event_data.user_id' }] });
  });
});

describe('push keys and device push', () => {
  it('register (the same device replaces), push to devices, remove', async () => {
    const driver = await member('OrgDriver', orgY);
    const key = { device_id: 'pixel-8', application_key: 'driver-app', push_notification_key: 'token-1' };
    expect((await api.post('/v1/push-keys', key, driver.token)).status).toBe(201);
    expect((await api.post('/v1/push-keys', { ...key, push_notification_key: 'token-2' }, driver.token)).status).toBe(
      201,
    );
    await api.post('/v1/push-keys', { ...key, device_id: 'tablet' }, driver.token);
    type Keys = { push_notifications: { user_id: string; device_id: string; push_notification_key: string }[] };
    const keys = await api.get<Keys>('/v1/push-keys?application_key=driver-app', admin);
    const mine = keys.body.push_notifications.filter((k) => k.user_id === driver.id);
    expect(mine.map((k) => [k.device_id, k.push_notification_key]).sort()).toEqual(
      [
        ['pixel-8', 'token-2'],
        ['tablet', 'token-1'],
      ].sort(),
    );

    const sent = await api.post(
      '/v1/push-messages',
      {
        application_key: 'driver-app',
        org_id: orgY,
        push_messages: [{ user_id: driver.id, title: 'New runsheet', body: 'Tap to accept', data: { runsheet: 'r1' } }],
      },
      admin,
    );
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ code: 'success', sent: 2 });
    const outbox = await api.get<{ messages: { device_id: string; title: string; data: unknown }[] }>(
      `/_local/push-outbox?user_id=${driver.id}`,
    );
    expect(outbox.body.messages.map((m) => m.device_id).sort()).toEqual(['pixel-8', 'tablet']);
    expect(outbox.body.messages[0]).toMatchObject({ title: 'New runsheet', data: { runsheet: 'r1' } });

    expect(
      (await api.post('/v1/push-keys', { ...key, user_id: (await member('OrgDriver', orgY)).id }, driver.token)).status,
    ).toBe(403);
    const removed = await api.delete('/v1/me/push-keys', undefined, driver.token);
    expect(removed.body).toMatchObject({ code: 'success', removed: 2 });
    expect((await api.delete('/v1/org/me/push-keys', undefined, driver.token)).body).toMatchObject({ removed: 0 });
  });

  it('refuses more than 500 messages, a bad is_qa and reversed ranges', async () => {
    const messages = Array.from({ length: 501 }, () => ({
      user_id: '00000000-0000-4000-8000-000000000000',
      title: 't',
      body: 'b',
    }));
    expect(
      (await api.post('/v1/push-messages', { application_key: 'a', push_messages: messages }, admin)).body,
    ).toMatchObject({ status: 400, errors: [{ path: 'push_messages' }] });
    expect((await api.get('/v1/push-keys?is_qa=maybe', admin)).body).toMatchObject({
      status: 400,
      errors: [{ path: 'query.is_qa' }],
    });
    expect(
      (
        await api.get(
          '/v1/push-keys?range_start_created_at=2026-02-01T00:00:00Z&range_end_created_at=2026-01-01T00:00:00Z',
          admin,
        )
      ).status,
    ).toBe(400);
  });
});

describe('notification log replies (issue 28.6)', () => {
  it('carry the entry’s members only on N2 and N4: no key, index, entity or read stamp', async () => {
    const merchant = await member('Merchant', orgX);
    const started = new Date().toISOString();
    await api.post(
      '/v1/notifications',
      { event_type: 'hygiene', event_data: { user_id: merchant.id, title: 'Clean' } },
      admin,
    );
    type Entry = Record<string, unknown> & { id: string };
    const listed = await api.get<{ notifications: Entry[] }>(
      `/v1/notifications?range_start_created_at=${encodeURIComponent(started)}`,
      merchant.token,
    );
    const entry = listed.body.notifications.find((n) => n['event_type'] === 'hygiene')!;
    await api.post(`/v1/notifications/${entry.id}/read`, {}, merchant.token);
    const one = await api.get<Entry>(`/v1/notifications/${entry.id}`, merchant.token);
    const members = ['created_at', 'event_data', 'event_type', 'id', 'is_read', 'user_id'];
    expect(Object.keys(entry).sort()).toEqual(members);
    expect(Object.keys(one.body).sort()).toEqual(members);
    expect(one.body['event_data']).toEqual({ user_id: merchant.id, title: 'Clean' });
  });
});

describe('what one connection may ask (issue 33.2 and 33.8)', () => {
  const userChannel = () => `user.${randomUUID()}`;
  const ofType = (frames: Frame[], type: string, code?: string) =>
    frames.filter((f) => f.type === type && (code === undefined || f.code === code));

  it('refuses the 21st channel with limit_exceeded, unread, and keeps the connection working', async () => {
    const c = await connect(admin);
    const twenty = Array.from({ length: 20 }, userChannel);
    c.subscribe(twenty);
    expect(await c.when(() => c.frames.length >= 1)).toBe(true);
    expect(c.frames[0]).toEqual({ type: 'subscribed', channels: twenty });
    const [extra, another] = [userChannel(), userChannel()];
    c.subscribe([twenty[0]!, extra, another]);
    expect(await c.when(() => c.frames.length >= 3)).toBe(true);
    expect(c.frames.slice(1)).toEqual([
      { type: 'subscribed', channels: [twenty[0]] },
      { type: 'error', code: 'limit_exceeded', channels: [extra, another], message: expect.any(String) },
    ]);
    const sent = await api.post<{ delivered: number }>(
      '/v1/events',
      {
        events: [
          { channel: twenty[19], name: 'still.here', data: {} },
          { channel: extra, name: 'not.here', data: {} },
        ],
      },
      admin,
    );
    expect(sent.body.delivered).toBe(1);
    expect(await c.when(() => c.frames.some((f) => f.name === 'still.here'))).toBe(true);
    c.socket.close();
  });

  it('refuses the 11th subscribe frame within a second and a 33 KB frame, then answers the next ones', async () => {
    const merchant = await member('Merchant', orgX);
    const c = await connect(merchant.token);
    const mine = [`user.${merchant.id}`];
    for (let i = 0; i < 11; i++) c.subscribe(mine);
    expect(await c.when(() => c.frames.length >= 11)).toBe(true);
    expect(ofType(c.frames, 'subscribed')).toHaveLength(10);
    expect(ofType(c.frames, 'error')).toEqual([
      { type: 'error', code: 'limit_exceeded', message: expect.stringContaining('10 subscribe frames a second') },
    ]);
    // The window slides: a second later the connection subscribes again.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    c.subscribe([`org.${orgX}`]);
    expect(await c.when(() => c.frames.length >= 12)).toBe(true);
    expect(c.frames[11]).toEqual({ type: 'subscribed', channels: [`org.${orgX}`] });

    const padding = 'x'.repeat(33 * 1024);
    c.socket.send(JSON.stringify({ action: 'subscribe', channels: mine, padding }));
    c.socket.send(JSON.stringify({ action: 'hello', padding }));
    expect(await c.when(() => c.frames.length >= 14)).toBe(true);
    expect(c.frames.slice(12)).toEqual([
      { type: 'error', code: 'limit_exceeded', message: expect.stringContaining('32768 bytes') },
      { type: 'error', code: 'limit_exceeded', message: expect.stringContaining('32768 bytes') },
    ]);
    c.subscribe(mine);
    expect(await c.when(() => c.frames.length >= 15)).toBe(true);
    expect(c.frames[14]).toEqual({ type: 'subscribed', channels: mine });
    c.socket.close();
  });

  /** A socket and its connection id, found as the one connection record its $connect added. */
  async function connectWithId(token: string) {
    const { db, connectionsTableName } = await import('../../shared/db/client.ts');
    const ids = async () => {
      const out = await db().send(
        new ScanCommand({
          TableName: connectionsTableName(),
          FilterExpression: 'SK = :conn',
          ExpressionAttributeValues: { ':conn': 'CONN' },
        }),
      );
      return new Set((out.Items ?? []).map((item) => String(item['connection_id'])));
    };
    const before = await ids();
    const c = await connect(token);
    const added = [...(await ids())].filter((id) => !before.has(id));
    expect(added).toHaveLength(1);
    return { ...c, connectionId: added[0]! };
  }

  /** Subscribe frames of one connection handled at once, as API Gateway may invoke the route in the cloud. */
  const subscribeAtOnce = (connectionId: string, frames: string[][]) =>
    Promise.all(
      frames.map((channels) =>
        subscribeHandler({
          requestContext: {
            routeKey: 'subscribe',
            eventType: 'MESSAGE',
            connectionId,
            requestTimeEpoch: Date.now(),
          },
          body: JSON.stringify({ action: 'subscribe', channels }),
          isBase64Encoded: false,
        } as unknown as Parameters<typeof subscribeHandler>[0]),
      ),
    );

  it('holds at most 20 channels when subscribe frames of one connection run at once', async () => {
    const c = await connectWithId(admin);
    const asked = Array.from({ length: 25 }, userChannel);
    const frames = Array.from({ length: 5 }, (_, i) => asked.slice(i * 5, i * 5 + 5));
    await subscribeAtOnce(c.connectionId, frames);
    const answered = () => c.frames.flatMap((f) => f.channels ?? []).length;
    expect(await c.when(() => ofType(c.frames, 'subscribed').length === 5 && answered() === 25)).toBe(true);
    // Every frame was admitted (5 are within the rate): one `subscribed` each, and the 5 over 20 named as refused.
    const subscribed = ofType(c.frames, 'subscribed').flatMap((f) => f.channels ?? []);
    const refused = ofType(c.frames, 'error', 'limit_exceeded');
    expect(ofType(c.frames, 'subscribed')).toHaveLength(5);
    expect(subscribed).toHaveLength(20);
    expect(refused.every((f) => f.message?.includes('at most 20 channels'))).toBe(true);
    const overLimit = refused.flatMap((f) => f.channels ?? []);
    expect([...subscribed, ...overLimit].sort()).toEqual([...asked].sort());
    // What is stored agrees: an event on each of the 25 channels reaches the 20 held.
    const sent = await api.post<{ delivered: number }>(
      '/v1/events',
      { events: asked.map((channel) => ({ channel, name: 'which', data: {} })) },
      admin,
    );
    expect(sent.body.delivered).toBe(20);
    expect(await c.when(() => c.frames.filter((f) => f.name === 'which').length === 20)).toBe(true);
    expect(c.frames.filter((f) => f.name === 'which').map((f) => f.channel)).toEqual(
      asked.filter((channel) => subscribed.includes(channel)),
    );
    // Full now: a later frame gets no room.
    const late = userChannel();
    await subscribeAtOnce(c.connectionId, [[late]]);
    expect(await c.when(() => c.frames.some((f) => f.channels?.includes(late)))).toBe(true);
    expect(c.frames.at(-1)).toEqual({
      type: 'error',
      code: 'limit_exceeded',
      channels: [late],
      message: expect.any(String),
    });
    c.socket.close();
  });

  it('admits 10 subscribe frames of one connection arriving at once, and refuses the 11th for its rate', async () => {
    const merchant = await member('Merchant', orgX);
    const c = await connectWithId(merchant.token);
    const mine = [`user.${merchant.id}`, `org.${orgX}`];
    await subscribeAtOnce(
      c.connectionId,
      Array.from({ length: 11 }, () => mine),
    );
    expect(await c.when(() => c.frames.length >= 11)).toBe(true);
    expect(ofType(c.frames, 'subscribed')).toEqual(
      Array.from({ length: 10 }, () => ({ type: 'subscribed', channels: mine })),
    );
    expect(ofType(c.frames, 'error')).toEqual([
      { type: 'error', code: 'limit_exceeded', message: expect.stringContaining('10 subscribe frames a second') },
    ]);
    c.socket.close();
  });

  it('gives back the room a refused channel took', async () => {
    const c = await connectWithId(admin);
    const bogus = Array.from({ length: 20 }, (_, i) => `no-such-kind.${i}`);
    await subscribeAtOnce(c.connectionId, [bogus]);
    expect(await c.when(() => c.frames.length >= 21)).toBe(true);
    expect(c.frames[0]).toEqual({ type: 'subscribed', channels: [] });
    expect(ofType(c.frames, 'error', 'forbidden').map((f) => f.channel)).toEqual(bogus);
    const twenty = Array.from({ length: 20 }, userChannel);
    await subscribeAtOnce(c.connectionId, [twenty]);
    expect(await c.when(() => c.frames.length >= 22)).toBe(true);
    expect(c.frames.slice(21)).toEqual([{ type: 'subscribed', channels: twenty }]);
    c.socket.close();
  });

  it('makes no DynamoDB read or write for channels the connection holds already', async () => {
    const dispatcher = await member('OrgAdmin', orgX);
    const planning = (await api.post<{ id: string }>('/v1/plannings', { name: 'Held' }, dispatcher.token)).body.id;
    const channels = [`planning.${planning}`, `org.${orgX}`, `user.${dispatcher.id}`];
    const c = await connect(dispatcher.token);
    c.subscribe(channels);
    expect(await c.when(() => c.frames.length >= 1)).toBe(true);
    expect(c.frames[0]).toEqual({ type: 'subscribed', channels });

    const calls: { command: string; pk: string }[] = [];
    const counting: Middleware = (next, context) => async (args) => {
      const input = args.input as { Key?: { PK?: string }; Item?: { PK?: string } };
      calls.push({ command: context.commandName ?? '?', pk: String(input.Key?.PK ?? input.Item?.PK ?? '') });
      return next(args);
    };
    await withMiddleware('count-subscribe-calls', counting, async () => {
      c.subscribe(channels);
      expect(await c.when(() => c.frames.length >= 2)).toBe(true);
    });
    expect(c.frames[1]).toEqual({ type: 'subscribed', channels });
    // The connection's record (read, and its admission written) and the caller's token generation: nothing of the
    // channels (no planning read, no subscription written).
    expect(calls.filter((call) => !/^(CONN#|USER#)/.test(call.pk))).toEqual([]);
    expect(calls.filter((call) => call.command === 'PutCommand')).toEqual([]);
    expect(calls.length).toBeLessThanOrEqual(3);
    c.socket.close();
  });
});

describe('the local WebSocket gateway under bad frames (issue 33.7)', () => {
  it('closes a connection that sends 200 KB (1009), invalid UTF-8 (1007) or binary (1003); the others go on', async () => {
    const merchant = await member('Merchant', orgX);
    const bystander = await connect(merchant.token);
    bystander.subscribe([`user.${merchant.id}`]);
    expect(await bystander.when(() => bystander.frames.length >= 1)).toBe(true);

    const cases: [string, (socket: WebSocket) => void, number][] = [
      ['200 KB', (socket) => socket.send('x'.repeat(200 * 1024)), 1009],
      ['invalid UTF-8', (socket) => socket.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false }), 1007],
      ['binary', (socket) => socket.send(Buffer.from('{"action":"subscribe"}'), { binary: true }), 1003],
    ];
    for (const [what, send, code] of cases) {
      const offender = await connect(merchant.token);
      send(offender.socket);
      expect(await offender.when(() => offender.closed.code !== undefined), what).toBe(true);
      expect(offender.closed.code, what).toBe(code);
    }

    expect((await api.get('/health')).status).toBe(200);
    const sent = await api.post<{ delivered: number }>(
      '/v1/events',
      { events: [{ channel: `user.${merchant.id}`, name: 'still.up', data: {} }] },
      admin,
    );
    expect(sent.body.delivered).toBe(1);
    expect(await bystander.when(() => bystander.frames.some((f) => f.name === 'still.up'))).toBe(true);
    bystander.socket.close();
  });
});
