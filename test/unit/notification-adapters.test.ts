import {
  ApiGatewayManagementApiClient,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import {
  CreatePlatformEndpointCommand,
  DeleteEndpointCommand,
  EndpointDisabledException,
  PublishCommand,
  SetEndpointAttributesCommand,
  SNSClient,
} from '@aws-sdk/client-sns';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../shared/errors.ts';
import { problemBody, problemOf } from '../../shared/http/problems.ts';
import { snsPush } from '../../shared/ports/push.ts';

process.env['AWS_REGION'] ??= 'eu-west-1';
process.env['WEBSOCKET_MANAGEMENT_ENDPOINT'] = 'https://ws.example/live';
process.env['CONNECTIONS_TABLE'] = 'connections';

const target = { user_id: 'u1', application_key: 'driver-app', device_id: 'd1', push_notification_key: 'apns-token' };
const APP = 'arn:aws:sns:eu-west-1:1:app/APNS/driver-app';

describe('the SNS push adapter', () => {
  const sns = mockClient(SNSClient);
  beforeEach(() => sns.reset());

  it('creates one platform endpoint per key, on the application of its application_key', async () => {
    sns
      .on(CreatePlatformEndpointCommand)
      .resolves({ EndpointArn: 'arn:aws:sns:eu-west-1:1:endpoint/APNS/driver-app/e1' });
    const ref = await snsPush({ 'driver-app': APP }).register(target);
    expect(ref).toBe('arn:aws:sns:eu-west-1:1:endpoint/APNS/driver-app/e1');
    expect(sns.commandCalls(CreatePlatformEndpointCommand)[0]!.args[0].input).toEqual({
      PlatformApplicationArn: APP,
      Token: 'apns-token',
      CustomUserData: 'u1',
    });
    // An application_key with no application: invalid input at its path, which the registering client is answered
    // as a 400 problem there.
    const refusal = await snsPush({})
      .register(target)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    const field = { path: 'application_key', message: 'names no push application' };
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({ kind: 'invalid', errors: [field] });
    expect(problemBody(problemOf(refusal as DomainError), 'r')).toMatchObject({
      status: 400,
      code: 'validation_failed',
      detail: 'application_key: names no push application',
      errors: [field],
    });
  });

  it('takes over an endpoint SNS already has for the token', async () => {
    sns
      .on(CreatePlatformEndpointCommand)
      .rejects(
        new Error(
          'Invalid parameter: Token Reason: Endpoint arn:aws:sns:eu-west-1:1:endpoint/APNS/driver-app/old already exists with the same Token, but different attributes.',
        ),
      );
    sns.on(SetEndpointAttributesCommand).resolves({});
    expect(await snsPush({ 'driver-app': APP }).register(target)).toBe(
      'arn:aws:sns:eu-west-1:1:endpoint/APNS/driver-app/old',
    );
    expect(sns.commandCalls(SetEndpointAttributesCommand)[0]!.args[0].input.Attributes).toMatchObject({
      Enabled: 'true',
    });
  });

  it('publishes a per-platform message, and reports a disabled endpoint', async () => {
    sns
      .on(PublishCommand)
      .resolvesOnce({ MessageId: 'm' })
      .rejectsOnce(new EndpointDisabledException({ message: 'disabled', $metadata: {} }));
    const port = snsPush({ 'driver-app': APP });
    const key = { ...target, endpoint_ref: 'arn:aws:sns:eu-west-1:1:endpoint/APNS/driver-app/e1' };
    expect(await port.send(key, { title: 'Hi', body: 'There', data: { a: 1 } })).toBe('sent');
    const message = JSON.parse(sns.commandCalls(PublishCommand)[0]!.args[0].input.Message!);
    expect(JSON.parse(message.APNS)).toMatchObject({ aps: { alert: { title: 'Hi', body: 'There' } }, data: { a: 1 } });
    expect(JSON.parse(message.GCM)).toMatchObject({ notification: { title: 'Hi', body: 'There' } });
    expect(await port.send(key, { title: 'Hi', body: 'Again' })).toBe('disabled');
    sns.on(DeleteEndpointCommand).resolves({});
    await port.unregister(key.endpoint_ref);
    expect(sns.commandCalls(DeleteEndpointCommand)[0]!.args[0].input).toEqual({ EndpointArn: key.endpoint_ref });
  });
});

describe('WebSocket delivery through the management API', () => {
  it('posts the frame, and forgets a connection the API reports gone', async () => {
    const management = mockClient(ApiGatewayManagementApiClient);
    const ddb = mockClient(DynamoDBDocumentClient);
    ddb.on(GetCommand).resolves({ Item: { channels: [] } });
    ddb.on(DeleteCommand).resolves({});
    management.on(PostToConnectionCommand, { ConnectionId: 'alive' }).resolves({});
    management
      .on(PostToConnectionCommand, { ConnectionId: 'gone' })
      .rejects(new GoneException({ message: 'gone', $metadata: { httpStatusCode: 410 } }));
    const { sendFrame } = await import('../../shared/notifications/realtime.ts');
    expect(await sendFrame('alive', { type: 'event', channel: 'org.x', name: 'n', data: { a: 1 }, id: 'evt_1' })).toBe(
      true,
    );
    expect(
      JSON.parse(
        Buffer.from(management.commandCalls(PostToConnectionCommand)[0]!.args[0].input.Data as Uint8Array).toString(),
      ),
    ).toEqual({ type: 'event', channel: 'org.x', name: 'n', data: { a: 1 }, id: 'evt_1' });
    expect(await sendFrame('gone', { type: 'event', channel: 'org.x', name: 'n', data: {}, id: 'evt_2' })).toBe(false);
    expect(ddb.commandCalls(DeleteCommand)[0]!.args[0].input.Key).toEqual({ PK: 'CONN#gone', SK: 'CONN' });
  });
});
