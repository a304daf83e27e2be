/**
 * The latency proxy of the test support (test/support/latency-proxy.ts, docs/testing.md): its range setting, and that
 * DynamoDB calls through it reach the emulator and come back whole.
 */
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { parseLatency, startLatencyProxy } from '../support/latency-proxy.ts';

describe('DYNAMODB_LATENCY_MS', () => {
  it('reads a range, a single value, or nothing; refuses anything else', () => {
    expect(parseLatency('2-20')).toEqual({ min: 2, max: 20 });
    expect(parseLatency(' 10 ')).toEqual({ min: 10, max: 10 });
    expect(parseLatency('0.5-1.5')).toEqual({ min: 0.5, max: 1.5 });
    expect(parseLatency(undefined)).toBeUndefined();
    expect(parseLatency('')).toBeUndefined();
    expect(() => parseLatency('20-2')).toThrow(/upper bound/);
    expect(() => parseLatency('fast')).toThrow(/like 2-20/);
    expect(() => parseLatency('-5')).toThrow(/like 2-20/);
  });
});

describe('the latency proxy', () => {
  it('forwards every call to the emulator and hands back its answer', async () => {
    const proxy = await startLatencyProxy(inject('endpoints').dynamodb, { min: 1, max: 3 });
    try {
      const client = new DynamoDBClient({
        endpoint: proxy.url,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      });
      const name = `latency-${Math.random().toString(36).slice(2, 10)}`;
      await client.send(
        new CreateTableCommand({
          TableName: name,
          AttributeDefinitions: [{ AttributeName: 'PK', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'PK', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      const described = await client.send(new DescribeTableCommand({ TableName: name }));
      expect(described.Table?.TableName).toBe(name);
      expect(proxy.calls).toBe(2);
      client.destroy();
    } finally {
      await proxy.close();
    }
  });
});
