/** The notifications area's operations as the OpenAPI document explains them (see lib/openapi-docs/index.ts). */
import { EXAMPLE } from '#lib/openapi-docs/examples';
import type { AreaDocs } from '#lib/openapi-docs/types';

export const notificationsDocs: AreaDocs = {
  N1: {
    description:
      'Pushes events to the WebSocket subscribers of their channels (`org.<org_id>`, `user.<user_id>`); ' +
      'nothing is stored.',
    example: {
      body: {
        events: [
          {
            channel: 'org.3f6c2a1e-8d4b-4c7a-9e2f-5b1d0c9a7e31',
            name: 'task.updated',
            data: {
              task_id: 'T-100',
            },
          },
        ],
      },
    },
    fields: {
      'body/events': 'The events to push (1 to 500), each to the subscribers of its channel',
      'body/events/*/channel': '`org.<org_id>` or `user.<user_id>`',
      'body/events/*/name': 'The event’s name, e.g. task.updated',
      'body/events/*/data':
        'Any JSON, delivered as it is; at most 122 880 bytes (120 KiB) as JSON, so that its frame fits one WebSocket ' +
        'message (API Gateway’s 128 KiB): larger data is a 400 at `events[i].data`',
    },
  },
  N2: {
    description: 'Lists notification log entries by creation time (a Merchant: its own organisation’s).',
    example: {
      query: {
        per_page: '50',
        order: 'desc',
      },
    },
  },
  N3: {
    description: 'Marks one notification read; marking it again changes nothing.',
    example: {
      params: {
        notification_id: EXAMPLE.notificationID,
      },
    },
  },
  N4: {
    description: 'Reads one notification; links to stored objects in its data are presigned for 15 minutes.',
    example: {
      params: {
        notification_id: EXAMPLE.notificationID,
      },
    },
  },
  N5: {
    description:
      'Writes a notification log entry for `event_data.user_id` and delivers it live on `user.<user_id>`; ' +
      '`event_data` may carry more fields, kept as they are.',
    example: {
      body: {
        event_type: 'import.completed',
        event_data: {
          user_id: EXAMPLE.userID,
          title: 'Your import finished',
        },
      },
    },
    fields: {
      'body/event_data': 'The notification: `user_id` (who gets it), `title`, and any other members kept with it',
      'body/event_type': 'What happened, e.g. import.completed',
      'body/event_data/user_id': 'The user the notification is for',
      'body/event_data/title': 'The text shown to the user',
    },
  },
  N6: {
    description: 'Sends up to 500 push messages to the registered devices of their users (SNS).',
    example: {
      body: {
        push_messages: [
          {
            user_id: EXAMPLE.userID,
            title: 'New runsheet offer',
            body: 'West loop, 2 tasks',
            data: {
              runsheet_id: 'RS-2',
            },
          },
        ],
        application_key: 'driver-app',
      },
    },
    fields: {
      'body/push_messages': 'The messages (1 to 500), each to every device of its user',
      'body/push_messages/*/user_id': 'The user whose devices get the message',
      'body/push_messages/*/title': 'The message’s title',
      'body/push_messages/*/body': 'The message’s text',
      'body/push_messages/*/data': 'Data for the app, as it is',
      'body/push_messages/*/sound': 'The sound to play',
      'body/application_key': 'The app whose devices get the messages',
      'body/org_id': 'The users’ organisation',
    },
  },
  N7: {
    description: 'Lists registered push keys by creation time, optionally of one application or QA devices only.',
    example: {
      query: {
        application_key: 'driver-app',
        is_qa: 'false',
        per_page: '50',
      },
    },
    fields: {
      'query/application_key': 'Only keys of this app',
      'query/is_qa': 'true: only QA devices’ keys; false: only the others',
    },
  },
  N8: {
    description:
      'Registers the caller’s device for push messages; the same device and application replaces the key ' + 'it had.',
    example: {
      body: {
        device_id: 'pixel-7-3f9a',
        application_key: 'driver-app',
        push_notification_key: 'fcm:dGhpcy1pcy1hLWRldmljZS10b2tlbg',
        is_qa: false,
      },
    },
    fields: {
      'body/device_id': 'The device’s id',
      'body/application_key': 'The app the key is for',
      'body/push_notification_key': 'The platform’s push token (FCM, APNs)',
      'body/user_id': 'The user the key belongs to',
      'body/org_id': 'The user’s organisation',
      'body/is_qa': 'A QA (test) device',
    },
  },
  N9: {
    description: 'Removes every push key of the caller: no more push notifications to any of their devices.',
  },
  N10: {
    description: 'Removes every push key of the caller (the same as N9, on the org apps’ path).',
  },
};
