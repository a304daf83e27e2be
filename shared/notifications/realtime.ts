/**
 * Real-time channels over the WebSocket API. A connection is stored with its caller (`CONN#<id>`); subscribing
 * writes one item per channel (`CHAN#<channel> / <connection id>`), so a delivery is one Query and a PostToConnection
 * per subscriber, in parallel. A connection that answers 410 is removed at once, with its subscriptions.
 * The same code runs in the cloud and locally: the local host serves the management API the SDK calls.
 */
import type { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { isSysAdmin } from '#shared/auth/caller';
import { wire } from '#shared/aws/wire';
import { clock } from '#shared/clock';
import { connectionsTableName, db, mainTableName, queryAll } from '#shared/db/client';
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

export type Frame =
  | { type: 'subscribed'; channels: string[] }
  | { type: 'error'; code: string; channel?: string; message?: string }
  | { type: 'event'; channel: string; name: string; data: unknown };

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

/** $connect: the caller was authenticated from the `token` query parameter. */
export async function rememberConnection(connectionId: string, caller: Caller): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: connectionsTableName(),
      Item: {
        ...connectionKey(connectionId),
        connection_id: connectionId,
        caller,
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

/**
 * May `caller` join `channel`? Their own user, their own organisation, a planning of their organisation; SysAdmin
 * any, and only SysAdmin `drivers.freelance`.
 */
export async function mayJoin(caller: Caller, channel: string): Promise<boolean> {
  if (channel === FREELANCE_POSITIONS) return isSysAdmin(caller);
  const match = CHANNEL.exec(channel);
  if (!match) return false;
  if (isSysAdmin(caller)) return true;
  const [, kind, id] = match;
  if (kind === 'user') return caller.kind === 'user' && id === caller.id;
  if (kind === 'org') return caller.orgId !== null && id === caller.orgId;
  if (!caller.orgId) return false;
  const planning = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: planningKey(id!), ProjectionExpression: 'org_id' }),
  );
  return planning.Item?.['org_id'] === caller.orgId;
}

/** `{"action":"subscribe","channels":[…]}`: one `subscribed` frame for the granted, one `error` frame per refused. */
export async function subscribe(connectionId: string, requested: unknown): Promise<void> {
  const out = await db().send(new GetCommand({ TableName: connectionsTableName(), Key: connectionKey(connectionId) }));
  if (!out.Item) return;
  const caller = out.Item['caller'] as Caller;
  const channels = Array.isArray(requested)
    ? requested.filter((c): c is string => typeof c === 'string').slice(0, 50)
    : [];
  if (channels.length === 0) {
    await sendFrame(connectionId, {
      type: 'error',
      code: 'validation_failed',
      message: 'channels must be a non-empty array of channel names',
    });
    return;
  }
  const decisions = await Promise.all(
    channels.map(async (channel) => ({ channel, allowed: await mayJoin(caller, channel) })),
  );
  const granted = [...new Set(decisions.filter((d) => d.allowed).map((d) => d.channel))];
  const expiresAt = Number(out.Item['expires_at']);
  await Promise.all(
    granted.map((channel) =>
      db().send(
        new PutCommand({
          TableName: connectionsTableName(),
          Item: { ...subscriptionKey(channel, connectionId), expires_at: expiresAt },
        }),
      ),
    ),
  );
  if (granted.length > 0) {
    // Appended, not rewritten: two subscribes on one connection at once both keep their channels.
    await db().send(
      new UpdateCommand({
        TableName: connectionsTableName(),
        Key: connectionKey(connectionId),
        UpdateExpression: 'SET channels = list_append(if_not_exists(channels, :empty), :granted)',
        ExpressionAttributeValues: { ':granted': granted, ':empty': [] },
      }),
    );
  }
  await sendFrame(connectionId, { type: 'subscribed', channels: granted });
  for (const refused of decisions.filter((d) => !d.allowed)) {
    await sendFrame(connectionId, { type: 'error', code: 'forbidden', channel: refused.channel });
  }
}

/** Delivers an event to every connection subscribed to `channel`, in parallel; gone ones are removed. */
export function publish(channel: string, name: string, data: unknown): Promise<{ delivered: number; gone: number }> {
  return publishFrames(channel, name, [data]);
}

/**
 * Delivers several events of one channel with one subscriber Query: each connection gets the frames in order.
 * Returns the frames delivered and the connections found gone.
 */
export async function publishFrames(
  channel: string,
  name: string,
  payloads: unknown[],
): Promise<{ delivered: number; gone: number }> {
  const subscribers = (
    await queryAll({
      TableName: connectionsTableName(),
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': `CHAN#${channel}` },
    })
  ).map((item) => String(item['SK']));
  const frames: Frame[] = payloads.map((data) => ({ type: 'event', channel, name, data }));
  let delivered = 0;
  let gone = 0;
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
  return { delivered, gone };
}

/** N1: each event to its channel's subscribers; how many frames went out. */
export async function pushEvents(events: { channel: string; name: string; data?: unknown }[]): Promise<number> {
  let delivered = 0;
  for (const event of events) delivered += (await publish(event.channel, event.name, event.data ?? null)).delivered;
  return delivered;
}
