/**
 * Real-time channels over the WebSocket API. A connection is stored with its caller and its token's `gen` and `exp`
 * (`CONN#<id>`); subscribing writes one item per channel (`CHAN#<channel> / <connection id>`, carrying the same
 * principal, `gen` and `exp`), so a delivery is one Query, one cached generation read for the distinct principals
 * (BatchGetItem), and a PostToConnection per subscriber, in parallel. A connection that answers 410 is removed at
 * once, with its subscriptions; one whose token expired or whose principal's generation moved on (deletion, logout
 * everywhere, password reset, a revoked client) is closed (DeleteConnection) and removed, on subscribe and on
 * delivery alike (docs/realtime.md).
 * The same code runs in the cloud and locally: the local host serves the management API the SDK calls.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Session } from '#shared/auth/authorizer';
import { type Caller, hasRole, isSysAdmin } from '#shared/auth/caller';
import {
  checkSession,
  currentGenerations,
  type PrincipalKey,
  principalKey,
  sessionState,
} from '#shared/auth/generations';
import { wire } from '#shared/aws/wire';
import { clock } from '#shared/clock';
import { connectionsTableName, db, isConditionalFailure, mainTableName, queryAll } from '#shared/db/client';
import { logger } from '#shared/log';
import type { EventData, EventName } from '#shared/notifications/events';
import { planningKey } from '#shared/planning/keys';

/** API Gateway closes a WebSocket after two hours; the records outlive it by a margin, then TTL removes them. */
const CONNECTION_TTL_SECONDS = 2 * 3600 + 600;
const FAN_OUT = 32;

const connectionKey = (id: string) => ({ PK: `CONN#${id}`, SK: 'CONN' });
const subscriptionKey = (channel: string, connectionId: string) => ({ PK: `CHAN#${channel}`, SK: connectionId });

type ManagementSdk = typeof import('@aws-sdk/client-apigatewaymanagementapi');
let management: Promise<{ sdk: ManagementSdk; client: ApiGatewayManagementApiClient }> | undefined;

/** Loaded on first use and not bundled (the Lambda runtime ships it): most functions never deliver a frame. */
function managementApi() {
  if (!management) {
    const endpoint = process.env['WEBSOCKET_MANAGEMENT_ENDPOINT'];
    if (!endpoint) throw new Error('missing required environment variable WEBSOCKET_MANAGEMENT_ENDPOINT');
    management = import('@aws-sdk/client-apigatewaymanagementapi').then((sdk) => ({
      sdk,
      client: new sdk.ApiGatewayManagementApiClient({ ...wire(), endpoint }),
    }));
  }
  return management;
}

/** What one connection may hold and send (contract 4.3): the cost of a subscribe is bounded by these. */
export const LIMITS = {
  /** Channels a connection holds at most. */
  channels: 20,
  /** Subscribe frames a connection may send within any one second (a sliding window). */
  subscribesPerSecond: 10,
  /** Bytes of a frame the routes read; a bigger one is refused unread. */
  frameBytes: 32 * 1024,
} as const;

export type Frame =
  | { type: 'subscribed'; channels: string[] }
  | { type: 'pong' }
  | { type: 'error'; code: string; channel?: string; channels?: string[]; message?: string }
  | { type: 'event'; channel: string; name: string; data: unknown; id: string };

/**
 * One event for a channel: `key` says what it is about (a pair's move, a notification, a job's status...), so that
 * the same event sent again (a retried request, a rerun worker, a stream batch retried) carries the same frame `id`.
 */
export interface ChannelEvent {
  key: string;
  data: unknown;
}

/** A frame's `id`: unique per channel, event name and key; the same on every redelivery of that event. */
export const eventId = (channel: string, name: string, key: string) =>
  `evt_${createHash('sha256').update(`${channel}\u0000${name}\u0000${key}`).digest('hex').slice(0, 24)}`;

const isGone = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'GoneException' || e.$metadata?.httpStatusCode === 410;
};

/** Sends one frame; false when the connection is gone (and then forgotten). */
export async function sendFrame(connectionId: string, frame: Frame): Promise<boolean> {
  try {
    const { sdk, client } = await managementApi();
    await client.send(
      new sdk.PostToConnectionCommand({ ConnectionId: connectionId, Data: Buffer.from(JSON.stringify(frame)) }),
    );
    return true;
  } catch (error) {
    if (!isGone(error)) throw error;
    await forgetConnection(connectionId);
    return false;
  }
}

/**
 * Closes a connection whose token no longer holds (DeleteConnection; one already gone is fine) and forgets it and
 * its subscriptions (the $disconnect that follows finds nothing left).
 */
export async function dropConnection(connectionId: string): Promise<void> {
  const { sdk, client } = await managementApi();
  try {
    await client.send(new sdk.DeleteConnectionCommand({ ConnectionId: connectionId }));
  } catch (error) {
    if (!isGone(error)) throw error;
  }
  await forgetConnection(connectionId);
}

/** $connect: the caller was authenticated from the `token` query parameter; its `gen` and `exp` are kept. */
export async function rememberConnection(connectionId: string, session: Session): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: connectionsTableName(),
      Item: {
        ...connectionKey(connectionId),
        connection_id: connectionId,
        caller: session.caller,
        token_gen: session.generation,
        token_exp: session.expiresAt,
        channels: [],
        connected_at: clock.nowIso(),
        expires_at: clock.nowEpochSeconds() + CONNECTION_TTL_SECONDS,
      },
    }),
  );
}

/** $disconnect, and a 410 on delivery: the connection and every subscription of it go. */
export async function forgetConnection(connectionId: string): Promise<void> {
  const out = await db().send(new GetCommand({ TableName: connectionsTableName(), Key: connectionKey(connectionId) }));
  const channels = [...new Set((out.Item?.['channels'] as string[] | undefined) ?? [])];
  for (let i = 0; i < channels.length; i += 25) {
    await db().send(
      new BatchWriteCommand({
        RequestItems: {
          [connectionsTableName()]: channels
            .slice(i, i + 25)
            .map((channel) => ({ DeleteRequest: { Key: subscriptionKey(channel, connectionId) } })),
        },
      }),
    );
  }
  await db().send(new DeleteCommand({ TableName: connectionsTableName(), Key: connectionKey(connectionId) }));
}

const CHANNEL = /^(user|org|planning)\.([0-9a-f-]{36})$/;
/** Live positions of freelance drivers (no organisation): SysAdmin's alone. */
const FREELANCE_POSITIONS = 'drivers.freelance';

/** The people who watch an organisation's channels: never its drivers, partners or other clients (contract 4.3). */
const WATCHERS = ['OrgAdmin', 'OrgTransporter', 'Merchant'] as const;

/**
 * May `caller` join `channel`? Any user their own user; OrgAdmin, OrgTransporter and Merchant their own organisation
 * and its plannings (a driver hears their offers on their own user channel, never colleagues' positions); SysAdmin
 * any, and only SysAdmin `drivers.freelance`.
 */
export async function mayJoin(caller: Caller, channel: string): Promise<boolean> {
  if (channel === FREELANCE_POSITIONS) return isSysAdmin(caller);
  const match = CHANNEL.exec(channel);
  if (!match) return false;
  if (isSysAdmin(caller)) return true;
  const [, kind, id] = match;
  if (kind === 'user') return caller.kind === 'user' && id === caller.id;
  if (caller.kind !== 'user' || !caller.orgId || !hasRole(caller, ...WATCHERS)) return false;
  if (kind === 'org') return id === caller.orgId;
  const planning = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: planningKey(id!), ProjectionExpression: 'org_id' }),
  );
  return planning.Item?.['org_id'] === caller.orgId;
}

/** The token facts a connection (and each of its subscriptions) carries; undefined for a record written without. */
function recordedSession(item: Record<string, unknown>): { expiresAt: number; generation: number } | undefined {
  const expiresAt = item['token_exp'];
  const generation = item['token_gen'];
  return typeof expiresAt === 'number' && typeof generation === 'number' ? { expiresAt, generation } : undefined;
}

const REFUSED = {
  expired: {
    code: 'token_expired',
    message: 'the bearer token of this connection expired; connect again with a new one',
  },
  revoked: {
    code: 'token_revoked',
    message: 'the bearer token of this connection was revoked (logout, password reset or deleted account)',
  },
} as const;

const LIMIT_EXCEEDED = 'limit_exceeded';

/** A frame the routes refuse unread: over `LIMITS.frameBytes`. True when it was refused (and told). */
export async function refusedOversized(connectionId: string, body: string | undefined): Promise<boolean> {
  if (Buffer.byteLength(body ?? '', 'utf8') <= LIMITS.frameBytes) return false;
  await sendFrame(connectionId, {
    type: 'error',
    code: LIMIT_EXCEEDED,
    message: `a frame holds at most ${LIMITS.frameBytes} bytes; this one was not read`,
  });
  return true;
}

/** What an admitted subscribe frame may do: the channels it decides on, and those beyond the connection's room. */
interface Admission {
  /** The channels the connection held as read at admission: they cost nothing and are answered as held. */
  held: Set<string>;
  /** The channels this frame decides on (asked, not held, within the room), in the order asked. */
  deciding: string[];
  /** Those of `deciding` this frame reserved: released again if refused. */
  reserved: string[];
  /** The channels beyond `LIMITS.channels`, refused unread. */
  overLimit: string[];
}

const stringsOf = (value: unknown): string[] =>
  value instanceof Set || Array.isArray(value) ? [...(value as Iterable<string>)] : [];

/** The most rewrites of its item a subscribe frame may lose to other frames of the connection before it gives up. */
const ADMISSION_ATTEMPTS = 2 * LIMITS.subscribesPerSecond + 1;

/**
 * Admits one subscribe frame of the connection, or not (undefined): at most `LIMITS.subscribesPerSecond` within any
 * second of their arrival (`receivedAt`, API Gateway's `requestTimeEpoch`), and at most `LIMITS.channels` channels
 * held. The connection item keeps the arrival times of the last admitted frames (`recent_subscribes`) and, in
 * `reserved_channels`, the channels it holds or that a frame is granting; each admission rewrites the times and
 * reserves its new channels on the condition that nobody else did meanwhile (`subscribe_seq`: frames of one
 * connection may run at once in the cloud), so concurrent frames never reserve more than the room left. A frame that
 * loses that race is judged again against the winner's write; it loses only to frames admitted meanwhile, which the
 * rate limit bounds. A refused frame writes nothing.
 */
async function admitSubscribe(
  connectionId: string,
  item: Record<string, unknown>,
  receivedAt: number,
  channels: string[],
): Promise<Admission | undefined> {
  let current: Record<string, unknown> | undefined = item;
  for (let attempt = 0; attempt < ADMISSION_ATTEMPTS && current; attempt++) {
    const recent = ((current['recent_subscribes'] as number[] | undefined) ?? []).filter(
      (at) => at > receivedAt - 1000,
    );
    if (recent.length >= LIMITS.subscribesPerSecond) return undefined;
    const held = new Set(stringsOf(current['channels']));
    // A connection recorded before reservations counts the channels it holds.
    const counted = new Set([...held, ...stringsOf(current['reserved_channels'])]);
    const fresh = channels.filter((channel) => !held.has(channel));
    // Reserved by another frame still deciding on it: this one decides too, taking no more room.
    const unreserved = fresh.filter((channel) => !counted.has(channel));
    const room = Math.max(0, LIMITS.channels - counted.size);
    const reserved = unreserved.slice(0, room);
    const overLimit = unreserved.slice(room);
    const seq = current['subscribe_seq'];
    try {
      await db().send(
        new UpdateCommand({
          TableName: connectionsTableName(),
          Key: connectionKey(connectionId),
          UpdateExpression: `SET recent_subscribes = :recent, subscribe_seq = :next${
            reserved.length > 0 ? ' ADD reserved_channels :reserved' : ''
          }`,
          ConditionExpression:
            typeof seq === 'number'
              ? 'subscribe_seq = :seq'
              : 'attribute_exists(PK) AND attribute_not_exists(subscribe_seq)',
          ExpressionAttributeValues: {
            ':recent': [...recent, receivedAt],
            ':next': typeof seq === 'number' ? seq + 1 : 1,
            ...(typeof seq === 'number' ? { ':seq': seq } : {}),
            ...(reserved.length > 0 ? { ':reserved': new Set(reserved) } : {}),
          },
        }),
      );
      const overflow = new Set(overLimit);
      return { held, deciding: fresh.filter((channel) => !overflow.has(channel)), reserved, overLimit };
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
    // Another frame of this connection was admitted meanwhile (or the connection went): judge again against it.
    current = (
      await db().send(
        new GetCommand({ TableName: connectionsTableName(), Key: connectionKey(connectionId), ConsistentRead: true }),
      )
    ).Item;
  }
  return undefined;
}

/**
 * `{"action":"subscribe","channels":[…]}`: one `subscribed` frame for the channels the connection now holds of
 * those asked, one `forbidden` error frame per refused, one `limit_exceeded` frame naming those beyond
 * `LIMITS.channels` (counted with the channels other frames of the connection reserved at the same time). A
 * connection whose token expired or was revoked since $connect gets one `error` frame (`token_expired`,
 * `token_revoked`) and is closed; one over `LIMITS.subscribesPerSecond` gets `limit_exceeded` and nothing else.
 * Channels the connection holds already cost nothing (no read, no write): a subscribe costs the connection's read,
 * its admission, a read (a planning channel) and a write per channel newly asked for, and one write of the
 * connection's channels.
 */
export async function subscribe(connectionId: string, requested: unknown, receivedAt = clock.nowMs()): Promise<void> {
  const out = await db().send(
    new GetCommand({ TableName: connectionsTableName(), Key: connectionKey(connectionId), ConsistentRead: true }),
  );
  if (!out.Item) return;
  const caller = out.Item['caller'] as Caller;
  const session = recordedSession(out.Item);
  // A connection recorded before connections kept their token's gen and exp cannot be checked: treated as revoked.
  const state = session ? await checkSession(caller.kind, caller.id, session) : 'revoked';
  if (state !== 'current') {
    await sendFrame(connectionId, { type: 'error', ...REFUSED[state] });
    await dropConnection(connectionId);
    return;
  }
  const channels = Array.isArray(requested)
    ? [...new Set(requested.filter((c): c is string => typeof c === 'string'))]
    : [];
  const admission = await admitSubscribe(connectionId, out.Item, receivedAt, channels);
  if (!admission) {
    await sendFrame(connectionId, {
      type: 'error',
      code: LIMIT_EXCEEDED,
      message: `at most ${LIMITS.subscribesPerSecond} subscribe frames a second; this one was not read, send it again later`,
    });
    return;
  }
  if (channels.length === 0) {
    await sendFrame(connectionId, {
      type: 'error',
      code: 'validation_failed',
      message: 'channels must be a non-empty array of channel names',
    });
    return;
  }
  const { held, deciding, reserved, overLimit } = admission;
  // Beyond the room left, channels are refused unread: a frame's cost never exceeds LIMITS.channels reads.
  const decisions = await Promise.all(
    deciding.map(async (channel) => ({ channel, allowed: await mayJoin(caller, channel) })),
  );
  const granted = decisions.filter((d) => d.allowed).map((d) => d.channel);
  const mine = new Set(reserved);
  // The room this frame reserved for a refused channel is given back (one another frame reserved, that one gives).
  const released = decisions.filter((d) => !d.allowed && mine.has(d.channel)).map((d) => d.channel);
  const expiresAt = Number(out.Item['expires_at']);
  await Promise.all(
    granted.map((channel) =>
      db().send(
        new PutCommand({
          TableName: connectionsTableName(),
          Item: {
            ...subscriptionKey(channel, connectionId),
            principal: principalKey(caller.kind, caller.id),
            token_gen: session!.generation,
            token_exp: session!.expiresAt,
            expires_at: expiresAt,
          },
        }),
      ),
    ),
  );
  if (granted.length > 0 || released.length > 0) {
    // Appended and removed, not rewritten: two subscribes on one connection at once both keep their channels.
    const appended = granted.length > 0 ? 'SET channels = list_append(if_not_exists(channels, :empty), :granted)' : '';
    const removed = released.length > 0 ? 'DELETE reserved_channels :released' : '';
    await db().send(
      new UpdateCommand({
        TableName: connectionsTableName(),
        Key: connectionKey(connectionId),
        UpdateExpression: [appended, removed].filter(Boolean).join(' '),
        ExpressionAttributeValues: {
          ...(granted.length > 0 ? { ':granted': granted, ':empty': [] } : {}),
          ...(released.length > 0 ? { ':released': new Set(released) } : {}),
        },
      }),
    );
  }
  const holds = new Set([...held, ...granted]);
  await sendFrame(connectionId, { type: 'subscribed', channels: channels.filter((channel) => holds.has(channel)) });
  for (const refused of decisions.filter((d) => !d.allowed)) {
    await sendFrame(connectionId, { type: 'error', code: 'forbidden', channel: refused.channel });
  }
  if (overLimit.length > 0) {
    await sendFrame(connectionId, {
      type: 'error',
      code: LIMIT_EXCEEDED,
      channels: overLimit,
      message: `a connection holds at most ${LIMITS.channels} channels; these were not subscribed`,
    });
  }
}

/**
 * The generations of one fan-out batch (an N1 request's events, a live-positions stream batch): each principal is
 * read at most once per batch (and through the container's cache), the distinct ones of a channel in one BatchGetItem.
 */
export class GenerationReads {
  private readonly reads = new Map<PrincipalKey, Promise<number | null>>();

  async of(keys: PrincipalKey[]): Promise<Map<PrincipalKey, number | null>> {
    const missing = [...new Set(keys)].filter((key) => !this.reads.has(key));
    if (missing.length > 0) {
      const batch = currentGenerations(missing);
      // A failed read is not remembered: the next channel of the batch asks again.
      batch.catch(() => {
        for (const key of missing) this.reads.delete(key);
      });
      for (const key of missing)
        this.reads.set(
          key,
          batch.then((found) => found.get(key) ?? null),
        );
    }
    const wanted = [...new Set(keys)];
    const generations = await Promise.all(wanted.map((key) => this.reads.get(key)!));
    return new Map(wanted.map((key, i) => [key, generations[i]!]));
  }
}

export interface Delivery {
  /** Frames delivered. */
  delivered: number;
  /** Connections found gone (410). */
  gone: number;
  /** Connections closed because their token expired or was revoked. */
  dropped: number;
}

/**
 * Delivers an event to every connection subscribed to `channel`, in parallel; gone ones are removed. `key` says what
 * the event is about (its frame `id` follows from it).
 */
export function publish(
  channel: string,
  name: string,
  event: ChannelEvent,
  reads?: GenerationReads,
): Promise<Delivery> {
  return publishFrames(channel, name, [event], reads);
}

/**
 * Delivers several events of one channel with one subscriber Query: each connection gets the frames in order. A
 * subscription whose token expired or whose principal's generation moved on gets nothing, and its connection is
 * closed and forgotten. Returns the frames delivered, the connections found gone and those dropped.
 */
export async function publishFrames(
  channel: string,
  name: string,
  events: ChannelEvent[],
  reads: GenerationReads = new GenerationReads(),
): Promise<Delivery> {
  const items = await queryAll({
    TableName: connectionsTableName(),
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': `CHAN#${channel}` },
  });
  // Only the principals of unexpired subscriptions are read: an expired one is dropped whatever its generation.
  const now = clock.nowEpochSeconds();
  const principals = items.flatMap((item) =>
    typeof item['principal'] === 'string' && Number(item['token_exp']) > now ? [item['principal'] as PrincipalKey] : [],
  );
  const generations = principals.length > 0 ? await reads.of(principals) : new Map<PrincipalKey, number | null>();
  const subscribers: string[] = [];
  const stale: string[] = [];
  for (const item of items) {
    const session = recordedSession(item);
    const principal = item['principal'];
    const current =
      session && typeof principal === 'string'
        ? sessionState(session, generations.get(principal as PrincipalKey) ?? null)
        : 'revoked';
    (current === 'current' ? subscribers : stale).push(String(item['SK']));
  }
  const frames: Frame[] = events.map(({ key, data }) => ({
    type: 'event',
    channel,
    name,
    data,
    id: eventId(channel, name, key),
  }));
  let delivered = 0;
  let gone = 0;
  const dropped = Promise.all(
    stale.map((connectionId) =>
      dropConnection(connectionId).catch((error: unknown) => {
        // Nothing was sent to it; the next delivery or subscribe tries again.
        logger.warn('could not close a revoked WebSocket connection', {
          connection_id: connectionId,
          error: error as Error,
        });
      }),
    ),
  );
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(FAN_OUT, subscribers.length) }, async () => {
      while (next < subscribers.length) {
        const connectionId = subscribers[next++]!;
        for (const frame of frames) {
          if (!(await sendFrame(connectionId, frame))) {
            gone++;
            break;
          }
          delivered++;
        }
      }
    }),
  );
  await dropped;
  return { delivered, gone, dropped: stale.length };
}

/** N1: each event to its channel's subscribers; how many frames went out. Each pushed event is a new one. */
export async function pushEvents(events: { channel: string; name: string; data?: unknown }[]): Promise<number> {
  const reads = new GenerationReads();
  let delivered = 0;
  for (const event of events) {
    delivered += (await publish(event.channel, event.name, { key: randomUUID(), data: event.data ?? null }, reads))
      .delivered;
  }
  return delivered;
}

/** `publish` of a declared event (`shared/notifications/events.ts`): its `data` typed as the client's types say. */
export const publishEvent = <N extends EventName>(
  channel: string,
  name: N,
  event: { key: string; data: EventData<N> },
  reads?: GenerationReads,
) => publish(channel, name, event, reads);

/** `publishFrames` of a declared event. */
export const publishEvents = <N extends EventName>(
  channel: string,
  name: N,
  events: { key: string; data: EventData<N> }[],
  reads?: GenerationReads,
) => publishFrames(channel, name, events, reads);
