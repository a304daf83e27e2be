/**
 * The notification log (N2–N5): an entry per N5 call, belonging to the organisation of the user it names, listed
 * newest first per organisation (GSI1) and for SysAdmin across all (GSI2). Object-storage links inside `event_data`
 * stay `s3://…` in lists and are presigned (15 minutes) when one entry is read.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getUser } from '#shared/accounts/users';
import { type Caller, hasRole, isSysAdmin } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, mainTableName } from '#shared/db/client';
import {
  type PageRequest,
  queryMergedPage,
  queryPage,
  type RangeQuery,
  rangeCondition,
  rangeMeta,
} from '#shared/db/paging';
import { listingPartition, listingPartitions } from '#shared/db/shards';
import { forbidden, invalidField, notFound } from '#shared/http/problems';
import { recordObjectId } from '#shared/ids';
import { logger } from '#shared/log';
import { publish } from '#shared/notifications/realtime';
import { presignLinks } from '#shared/ports/object-storage';

export const LINK_TTL_SECONDS = 15 * 60;

interface Entry {
  id: string;
  event_type: string;
  event_data: Record<string, unknown> & { user_id: string };
  is_read: boolean;
  user_id: string;
  org_id: string | null;
  created_at: string;
}

const entryKey = (id: string) => ({ PK: `NOTIF#${id}`, SK: 'ENTRY' });

/** N5: writes the entry, then delivers it to `user.<event_data.user_id>`. */
export async function notify(eventType: string, eventData: Entry['event_data']): Promise<{ server_time: string }> {
  const user = await getUser(eventData.user_id);
  if (!user || user.deleted_at) throw invalidField('event_data.user_id', 'names no user');
  const entry: Entry = {
    id: recordObjectId(),
    event_type: eventType,
    event_data: eventData,
    is_read: false,
    user_id: user.id,
    org_id: user.org_id,
    created_at: clock.nowIso(),
  };
  const sort = `${entry.created_at}#${entry.id}`;
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: {
        ...entryKey(entry.id),
        ...(entry.org_id ? { GSI1PK: `ORG#${entry.org_id}#NOTIFS`, GSI1SK: sort } : {}),
        GSI2PK: listingPartition('NOTIFS', entry.id),
        GSI2SK: sort,
        entity: 'notification',
        ...entry,
      },
    }),
  );
  // The entry is the notification (N2 lists it, the app reads it from there); the live delivery is a nudge to
  // whoever is connected. If it fails, the entry stands and the answer says what was done: failing the request now
  // would make its retry write a second entry.
  await publish(`user.${user.id}`, eventType, {
    key: entry.id,
    data: { ...eventData, notification_id: entry.id },
  }).catch((error: unknown) =>
    logger.warn('notification recorded; its live delivery failed (N2 lists it)', {
      notification_id: entry.id,
      error: error as Error,
    }),
  );
  return { server_time: clock.nowIso() };
}

/**
 * An entry as the API shows it (N2, N4): its members one by one, never the stored item (its keys, index entries,
 * `entity`, `read_at` and the organisation it is filed under stay in storage).
 */
const view = (entry: Entry) => ({
  id: entry.id,
  event_type: entry.event_type,
  event_data: entry.event_data,
  is_read: entry.is_read,
  user_id: entry.user_id,
  created_at: entry.created_at,
});

/** Who may list and mark: SysAdmin everything, a Merchant its own organisation. */
function listingScope(caller: Caller): { index: 'GSI1' | 'GSI2'; partition: string } {
  if (isSysAdmin(caller)) return { index: 'GSI2', partition: 'NOTIFS' };
  if (!caller.orgId) throw forbidden('your account belongs to no organisation');
  return { index: 'GSI1', partition: `ORG#${caller.orgId}#NOTIFS` };
}

/** N2. */
export async function listNotifications(caller: Caller, range: RangeQuery, page: PageRequest) {
  const { index, partition } = listingScope(caller);
  const input = { TableName: mainTableName(), IndexName: index, ...rangeCondition(index, partition, range) };
  const shown = (item: Record<string, unknown>) => view(item as unknown as Entry);
  const found =
    partition === 'NOTIFS'
      ? await queryMergedPage(listingPartitions(partition), input, page, shown)
      : await queryPage(input, page, shown);
  return { meta: { ...rangeMeta(range), ...found.meta }, notifications: found.items };
}

async function visibleEntry(caller: Caller, id: string, allowSubject: boolean): Promise<Entry> {
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: entryKey(id) }));
  const entry = out.Item as Entry | undefined;
  if (!entry) throw notFound('notification');
  if (isSysAdmin(caller)) return entry;
  if (allowSubject && caller.kind === 'user' && entry.user_id === caller.id) return entry;
  if (hasRole(caller, 'Merchant') && caller.orgId !== null && entry.org_id === caller.orgId) return entry;
  throw notFound('notification');
}

/** N3: idempotent. */
export async function markRead(caller: Caller, id: string) {
  await visibleEntry(caller, id, false);
  await db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: entryKey(id),
      UpdateExpression: 'SET is_read = :true, read_at = if_not_exists(read_at, :now)',
      ExpressionAttributeValues: { ':true': true, ':now': clock.nowIso() },
    }),
  );
  return { message: 'the notification is marked read', server_time: clock.nowIso() };
}

/** N4: object-storage links presigned for 15 minutes. */
export async function readNotification(caller: Caller, id: string) {
  const entry = view(await visibleEntry(caller, id, true));
  return { ...entry, event_data: (await presignLinks(entry.event_data, LINK_TTL_SECONDS)) as Entry['event_data'] };
}
