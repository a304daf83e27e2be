import * as v from 'valibot';
import { INTERNAL_ROLES } from '#shared/auth/roles';
import { WEBSOCKET_MESSAGE_BYTES } from '#shared/notifications/keepalive';
import { isoTime, objectId, rangedListQuery, rangePageMeta, recordKey, uuid } from '#shared/schemas/common';

const shortText = (max: number) =>
  v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(max));

export const NOTIFIERS = ['SysAdmin', ...INTERNAL_ROLES] as const;
export const MAX_EVENTS = 500;
export const MAX_PUSH_MESSAGES = 500;

/**
 * An N1 event's `data`, as JSON, in bytes: the frame that carries it (type, channel, name and id besides, under 4 KiB
 * however they are written) must fit one WebSocket message, which API Gateway refuses over 128 KiB. Larger data can
 * never be delivered: it is a 400 at its path, not a 202 that the cloud then fails.
 */
export const MAX_EVENT_DATA_BYTES = WEBSOCKET_MESSAGE_BYTES - 8 * 1024;

const eventData = v.pipe(
  v.unknown(),
  v.check(
    (data) => data === undefined || Buffer.byteLength(JSON.stringify(data)) <= MAX_EVENT_DATA_BYTES,
    `must be at most ${MAX_EVENT_DATA_BYTES} bytes as JSON: its frame must fit one WebSocket message (128 KiB)`,
  ),
);

export const eventsBody = v.object({
  events: v.pipe(
    v.array(
      v.object({ channel: shortText(200), name: shortText(200), data: v.optional(eventData) }),
      'must be an array of events',
    ),
    v.minLength(1, 'must not be empty'),
    v.maxLength(MAX_EVENTS, `must hold at most ${MAX_EVENTS} events`),
  ),
});

export const notificationBody = v.object({
  event_type: shortText(200),
  event_data: v.looseObject({ user_id: uuid, title: shortText(500) }),
});

export const listNotificationsQuery = rangedListQuery({});

export const notificationParams = v.object({ notification_id: objectId });

export const pushMessagesBody = v.object({
  push_messages: v.pipe(
    v.array(
      v.object({
        user_id: uuid,
        title: shortText(200),
        body: v.pipe(v.string('must be a string'), v.maxLength(2000)),
        data: v.optional(v.record(recordKey, v.unknown())),
        sound: v.optional(v.pipe(v.string(), v.maxLength(100))),
      }),
      'must be an array of push messages',
    ),
    v.minLength(1, 'must not be empty'),
    v.maxLength(MAX_PUSH_MESSAGES, `must hold at most ${MAX_PUSH_MESSAGES} messages`),
  ),
  application_key: shortText(200),
  org_id: v.optional(uuid),
});

export const listPushKeysQuery = rangedListQuery({
  application_key: v.optional(shortText(200)),
  is_qa: v.optional(
    v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((s) => s === 'true'),
    ),
  ),
});

export const pushKeyBody = v.object({
  device_id: shortText(200),
  application_key: shortText(200),
  push_notification_key: shortText(4096),
  user_id: v.optional(uuid),
  org_id: v.optional(v.nullable(uuid)),
  is_qa: v.optional(v.boolean('must be true or false')),
});

// Responses
const entry = v.object({
  id: v.string(),
  event_type: v.string(),
  // Open by design: the caller's own event payload (N5), kept as sent (spec: `user_id`, `title`, "plus further keys").
  event_data: v.record(v.string(), v.unknown()),
  is_read: v.boolean(),
  user_id: uuid,
  created_at: isoTime,
});
export const notificationList = v.object({ meta: rangePageMeta, notifications: v.array(entry) });
export const notificationView = entry;
/**
 * The success envelope (spec: `code`, `message`, `server_time`) with the counts the service adds to what it did,
 * documented here (the spec is silent on them): N1 the frames delivered, N6 its tally, N9/N10 the keys removed.
 */
const envelopeWith = <T extends v.ObjectEntries>(entries: T) =>
  v.object({ code: v.literal('success'), message: v.string(), server_time: isoTime, ...entries });
export const eventsReply = envelopeWith({ delivered: v.number() });
export const pushMessagesReply = envelopeWith({ sent: v.number(), removed: v.number(), no_device: v.number() });
export const pushKeysRemovedReply = envelopeWith({ removed: v.number() });
export const readReply = v.object({ message: v.string(), server_time: isoTime });
export const serverTimeReply = v.object({ server_time: isoTime });
export const pushKeyList = v.object({
  meta: rangePageMeta,
  push_notifications: v.array(
    v.object({
      id: v.string(),
      user_id: uuid,
      application_key: v.string(),
      device_id: v.string(),
      push_notification_key: v.string(),
      is_qa: v.boolean(),
      created_at: isoTime,
    }),
  ),
});
