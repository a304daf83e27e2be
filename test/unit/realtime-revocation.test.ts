/**
 * Issue 28.3, the cost of the check at delivery: one fan-out batch reads each distinct subscriber's token generation
 * once, in one BatchGetItem (never a GetItem per message per connection), skips expired subscriptions without
 * reading, delivers to the current ones and closes (DeleteConnection) the expired and revoked.
 */
import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';

process.env['AWS_REGION'] ??= 'eu-west-1';
process.env['WEBSOCKET_MANAGEMENT_ENDPOINT'] = 'https://ws.example/live';
process.env['CONNECTIONS_TABLE'] = 'connections';
process.env['MAIN_TABLE'] = 'main';
process.env['TOKEN_GENERATION_CACHE_MS'] = '0';

const future = Math.floor(Date.now() / 1000) + 3600;
const past = Math.floor(Date.now() / 1000) - 1;
const subscription = (channel: string, connection: string, principal: string, gen: number, exp = future) => ({
  PK: `CHAN#${channel}`,
  SK: connection,
  principal,
  token_gen: gen,
  token_exp: exp,
});

describe('delivery to WebSocket subscribers checks their tokens at one read per batch', () => {
  it('reads the distinct principals once, delivers to the current, closes the expired and revoked', async () => {
    const ddb = mockClient(DynamoDBDocumentClient);
    const management = mockClient(ApiGatewayManagementApiClient);
    ddb.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'CHAN#org.a' } }).resolves({
      Items: [
        subscription('org.a', 'c1', 'user#u1', 1),
        subscription('org.a', 'c2', 'user#u1', 1),
        subscription('org.a', 'c3', 'user#u2', 1),
        subscription('org.a', 'c4', 'user#u3', 1, past),
        // Written before subscriptions carried their token: cannot be checked, so it is closed.
        { PK: 'CHAN#org.a', SK: 'c6' },
      ],
    });
    ddb.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'CHAN#org.b' } }).resolves({
      Items: [subscription('org.b', 'c5', 'user#u1', 1), subscription('org.b', 'c7', 'client#k1', 4)],
    });
    ddb.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: { PK: string }[] }> }) => {
      const stored: Record<string, Record<string, unknown>> = {
        'USER#u1': { PK: 'USER#u1', token_gen: 1 },
        'USER#u2': { PK: 'USER#u2', token_gen: 2 },
        'CLIENT#k1': { PK: 'CLIENT#k1', token_gen: 4 },
      };
      return { Responses: { main: input.RequestItems['main']!.Keys.map((key) => stored[key.PK]).filter(Boolean) } };
    });
    ddb.on(GetCommand).resolves({ Item: { channels: ['org.a'] } });
    ddb.on(BatchWriteCommand).resolves({});
    ddb.on(DeleteCommand).resolves({});
    management.on(PostToConnectionCommand).resolves({});
    management.on(DeleteConnectionCommand).resolves({});

    const { GenerationReads, publishFrames } = await import('../../shared/notifications/realtime.ts');
    const reads = new GenerationReads();
    const a = await publishFrames(
      'org.a',
      'driver.location',
      [
        { key: 'k1', data: { n: 1 } },
        { key: 'k2', data: { n: 2 } },
      ],
      reads,
    );
    const b = await publishFrames('org.b', 'driver.location', [{ key: 'k1', data: { n: 1 } }], reads);

    expect(a).toEqual({ delivered: 4, gone: 0, dropped: 3 });
    expect(b).toEqual({ delivered: 2, gone: 0, dropped: 0 });
    // u1 is on both channels and read once; the expired u3 is not read at all; no GetItem of any principal.
    const batches = ddb.commandCalls(BatchGetCommand).map((call) => call.args[0].input.RequestItems!['main']!.Keys);
    expect(batches).toEqual([
      [
        { PK: 'USER#u1', SK: 'PROFILE' },
        { PK: 'USER#u2', SK: 'PROFILE' },
      ],
      [{ PK: 'CLIENT#k1', SK: 'PROFILE' }],
    ]);
    const gets = ddb.commandCalls(GetCommand).map((call) => call.args[0].input.Key!['PK']);
    expect(gets.filter((pk) => !String(pk).startsWith('CONN#'))).toEqual([]);
    const posted = management.commandCalls(PostToConnectionCommand).map((call) => call.args[0].input.ConnectionId);
    expect(posted.sort()).toEqual(['c1', 'c1', 'c2', 'c2', 'c5', 'c7']);
    const closed = management.commandCalls(DeleteConnectionCommand).map((call) => call.args[0].input.ConnectionId);
    expect(closed.sort()).toEqual(['c3', 'c4', 'c6']);
  });
});
