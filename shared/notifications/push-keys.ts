/**
 * Push notification keys (N7–N10) and bulk device push (N6). A key is one per user, application and device
 * (`PUSHKEY#<user> / <application>#<device>`), so registering the same device and application again replaces it;
 * listed newest first for everybody (GSI2 `PUSHKEYS`) or one application (GSI1 `PUSHKEYS#<application>`).
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getUser } from '#shared/accounts/users';
import { type Caller, isSysAdmin } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, mainTableName } from '#shared/db/client';
import type { PageRequest } from '#shared/db/paging';
import { queryPage, type RangeQuery, rangeCondition, rangeMeta } from '#shared/db/paging';
import { forbidden, invalidAt } from '#shared/errors';
import { newObjectId } from '#shared/ids';
import { type PushMessage, push } from '#shared/ports/push';

interface PushKey {
  id: string;
  user_id: string;
  application_key: string;
  device_id: string;
  push_notification_key: string;
  is_qa: boolean;
  created_at: string;
  org_id: string | null;
  endpoint_ref: string | null;
}

const keyOf = (userId: string, application: string, device: string) => ({
  PK: `PUSHKEY#${userId}`,
  SK: `${application}#${device}`,
});

const view = (key: PushKey) => ({
  id: key.id,
  user_id: key.user_id,
  application_key: key.application_key,
  device_id: key.device_id,
  push_notification_key: key.push_notification_key,
  is_qa: key.is_qa,
  created_at: key.created_at,
});

export interface NewPushKey {
  device_id: string;
  application_key: string;
  push_notification_key: string;
  user_id?: string | undefined;
  org_id?: string | null | undefined;
  is_qa?: boolean | undefined;
}

/** N8: a user registers their own device (SysAdmin anyone's); the organisation is the user's, never the body's. */
export async function registerPushKey(caller: Caller, input: NewPushKey): Promise<void> {
  const userId = input.user_id ?? caller.id;
  if (userId !== caller.id && !isSysAdmin(caller)) throw forbidden('you may register push keys for yourself only');
  const user = await getUser(userId);
  if (!user || user.deleted_at) throw invalidAt('user_id', 'names no user');
  if (input.org_id !== undefined && input.org_id !== user.org_id) {
    throw invalidAt('org_id', "must be the user's organisation");
  }
  const key = keyOf(user.id, input.application_key, input.device_id);
  const previous = (await db().send(new GetCommand({ TableName: mainTableName(), Key: key }))).Item as
    | PushKey
    | undefined;
  const endpointRef = await push().register({
    user_id: user.id,
    application_key: input.application_key,
    device_id: input.device_id,
    push_notification_key: input.push_notification_key,
  });
  const record: PushKey = {
    id: previous?.id ?? newObjectId(),
    user_id: user.id,
    application_key: input.application_key,
    device_id: input.device_id,
    push_notification_key: input.push_notification_key,
    is_qa: input.is_qa ?? false,
    created_at: clock.nowIso(),
    org_id: user.org_id,
    endpoint_ref: endpointRef,
  };
  const sort = `${record.created_at}#${record.id}`;
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: {
        ...key,
        GSI1PK: `PUSHKEYS#${record.application_key}`,
        GSI1SK: sort,
        GSI2PK: 'PUSHKEYS',
        GSI2SK: sort,
        entity: 'push_key',
        ...record,
      },
    }),
  );
  if (previous?.endpoint_ref && previous.endpoint_ref !== endpointRef) await push().unregister(previous.endpoint_ref);
}

async function keysOf(userId: string, application?: string): Promise<PushKey[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: mainTableName(),
      KeyConditionExpression: application ? 'PK = :pk AND begins_with(SK, :app)' : 'PK = :pk',
      ExpressionAttributeValues: { ':pk': `PUSHKEY#${userId}`, ...(application ? { ':app': `${application}#` } : {}) },
    }),
  );
  return (out.Items ?? []) as PushKey[];
}

async function removeKey(key: PushKey): Promise<void> {
  await db().send(
    new DeleteCommand({ TableName: mainTableName(), Key: keyOf(key.user_id, key.application_key, key.device_id) }),
  );
  await push().unregister(key.endpoint_ref);
}

/** N9, N10: every key of the caller. */
export async function removeOwnPushKeys(caller: Caller): Promise<number> {
  const keys = await keysOf(caller.id);
  await Promise.all(keys.map(removeKey));
  return keys.length;
}

/** N7. */
export async function listPushKeys(
  filters: RangeQuery & { application_key?: string | undefined; is_qa?: boolean | undefined },
  page: PageRequest,
) {
  const [index, partition] = filters.application_key
    ? (['GSI1', `PUSHKEYS#${filters.application_key}`] as const)
    : (['GSI2', 'PUSHKEYS'] as const);
  const found = await queryPage(
    {
      TableName: mainTableName(),
      IndexName: index,
      ...rangeCondition(index, partition, filters),
      ...(filters.is_qa === undefined
        ? {}
        : {
            FilterExpression: 'is_qa = :qa',
            ExpressionAttributeValues: {
              ...rangeCondition(index, partition, filters).ExpressionAttributeValues,
              ':qa': filters.is_qa,
            },
          }),
    },
    page,
    (item) => view(item as unknown as PushKey),
  );
  return { meta: { ...rangeMeta(filters), ...found.meta }, push_notifications: found.items };
}

export interface BulkPush {
  push_messages: (PushMessage & { user_id: string })[];
  application_key: string;
  org_id?: string | undefined;
}

/**
 * N6: each message to every device of its user for the application (and, when `org_id` is given, only keys of that
 * organisation). A key the platform reports disabled is removed. Never aborts on one bad message.
 */
export async function sendPushMessages(
  request: BulkPush,
): Promise<{ sent: number; removed: number; no_device: number }> {
  const tally = { sent: 0, removed: 0, no_device: 0 };
  for (let i = 0; i < request.push_messages.length; i += 25) {
    await Promise.all(
      request.push_messages.slice(i, i + 25).map(async (message) => {
        const keys = (await keysOf(message.user_id, request.application_key)).filter(
          (key) => request.org_id === undefined || key.org_id === request.org_id,
        );
        if (keys.length === 0) tally.no_device++;
        for (const key of keys) {
          if ((await push().send(key, message)) === 'sent') tally.sent++;
          else {
            await removeKey(key);
            tally.removed++;
          }
        }
      }),
    );
  }
  return tally;
}
