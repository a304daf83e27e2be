/**
 * The device push port. In the cloud, SNS mobile push: one platform endpoint per push key, created when the key is
 * registered (the platform application comes from `SNS_PLATFORM_APPLICATIONS`, a JSON map of application_key → ARN);
 * an endpoint SNS reports disabled is deleted with its key. Locally an outbox (`GET /_local/push-outbox`).
 */

import { wire } from '#shared/aws/wire';
import { clock } from '#shared/clock';
import { invalidAt } from '#shared/errors';
import { localOutboxStore } from '#shared/ports/local-outbox';

export interface PushTarget {
  user_id: string;
  application_key: string;
  device_id: string;
  push_notification_key: string;
  endpoint_ref: string | null;
}

export interface PushMessage {
  title: string;
  body: string;
  data?: Record<string, unknown> | undefined;
  sound?: string | undefined;
}

export interface PushPort {
  /** A reference to the platform endpoint for this key, or null where the port needs none. */
  register(target: Omit<PushTarget, 'endpoint_ref'>): Promise<string | null>;
  unregister(endpointRef: string | null): Promise<void>;
  /** 'disabled': the platform will never deliver to this key again; the caller removes it. */
  send(target: PushTarget, message: PushMessage): Promise<'sent' | 'disabled'>;
}

export interface OutboxPush {
  user_id: string;
  application_key: string;
  device_id: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  sound: string | null;
  sent_at: string;
}

const outbox = localOutboxStore<OutboxPush>('push');

export const localPush: PushPort & { read(userId?: string): OutboxPush[] } = {
  async register() {
    return null;
  },
  async unregister() {},
  async send(target, message) {
    outbox.push({
      user_id: target.user_id,
      application_key: target.application_key,
      device_id: target.device_id,
      title: message.title,
      body: message.body,
      data: message.data ?? {},
      sound: message.sound ?? null,
      sent_at: clock.nowIso(),
    });
    return 'sent';
  },
  read(userId) {
    return outbox
      .all()
      .filter((m) => userId === undefined || m.user_id === userId)
      .reverse();
  },
};

export function snsPush(applications: Record<string, string>): PushPort {
  const sns = import('@aws-sdk/client-sns').then((sdk) => ({ sdk, client: new sdk.SNSClient(wire()) }));
  return {
    async register(target) {
      const application = applications[target.application_key];
      if (!application) throw invalidAt('application_key', 'names no push application');
      const { sdk, client } = await sns;
      try {
        const out = await client.send(
          new sdk.CreatePlatformEndpointCommand({
            PlatformApplicationArn: application,
            Token: target.push_notification_key,
            CustomUserData: target.user_id,
          }),
        );
        return out.EndpointArn ?? null;
      } catch (error) {
        // The token already has an endpoint with other attributes: take it over and enable it.
        const existing = /Endpoint (arn:\S+) already exists/.exec((error as Error).message)?.[1];
        if (!existing) throw error;
        await client.send(
          new sdk.SetEndpointAttributesCommand({
            EndpointArn: existing,
            Attributes: { Enabled: 'true', Token: target.push_notification_key, CustomUserData: target.user_id },
          }),
        );
        return existing;
      }
    },
    async unregister(endpointRef) {
      if (!endpointRef) return;
      const { sdk, client } = await sns;
      await client.send(new sdk.DeleteEndpointCommand({ EndpointArn: endpointRef }));
    },
    async send(target, message) {
      if (!target.endpoint_ref) return 'disabled';
      const { sdk, client } = await sns;
      const apns = JSON.stringify({
        aps: { alert: { title: message.title, body: message.body }, sound: message.sound ?? 'default' },
        data: message.data ?? {},
      });
      try {
        await client.send(
          new sdk.PublishCommand({
            TargetArn: target.endpoint_ref,
            MessageStructure: 'json',
            Message: JSON.stringify({
              default: message.body,
              GCM: JSON.stringify({
                notification: { title: message.title, body: message.body, sound: message.sound ?? 'default' },
                data: message.data ?? {},
              }),
              APNS: apns,
              APNS_SANDBOX: apns,
            }),
          }),
        );
        return 'sent';
      } catch (error) {
        if (
          (error as { name?: string }).name === 'EndpointDisabledException' ||
          (error as { name?: string }).name === 'EndpointDisabled'
        ) {
          return 'disabled';
        }
        throw error;
      }
    },
  };
}

let port: PushPort | undefined;

export function push(): PushPort {
  if (!port) {
    const applications = process.env['SNS_PLATFORM_APPLICATIONS'];
    if (applications) port = snsPush(JSON.parse(applications) as Record<string, string>);
    else if (process.env['DISPATCH_LOCAL'] === '1') port = localPush;
    else throw new Error('missing required environment variable SNS_PLATFORM_APPLICATIONS');
  }
  return port;
}
