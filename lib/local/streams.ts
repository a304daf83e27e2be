/**
 * The local stand-in for a Lambda event source on a DynamoDB stream: every `intervalMs` (1 s unless told; the host's
 * positions poller: the cloud's batching window, shared/notifications/positions-window.ts), read every shard of a
 * table's stream from the emulator (DescribeStream, GetShardIterator, GetRecords) and hand the new records, as one
 * DynamoDBStreamEvent, to the same handler module the cloud runs. Records written before the poller started are not
 * replayed (a fresh iterator starts at LATEST); a shard found later is read from its start.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { LOCAL_CREDENTIALS } from '#lib/local/emulators';
import { ROOT } from '#lib/paths';
import { asFunction } from '#shared/local-invocation';

type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;

export interface StreamPoller {
  stop(): Promise<void>;
}

/** The cloud event's record shape (times in seconds, the table's stream ARN as the source). */
function toLambdaRecord(record: StreamRecord, streamArn: string): DynamoDBRecord {
  const change = record.dynamodb ?? {};
  return {
    eventID: record.eventID,
    eventName: record.eventName as DynamoDBRecord['eventName'],
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion ?? process.env['AWS_REGION'] ?? 'us-east-1',
    eventSourceARN: streamArn,
    dynamodb: {
      ...(change.ApproximateCreationDateTime
        ? { ApproximateCreationDateTime: Math.floor(change.ApproximateCreationDateTime.getTime() / 1000) }
        : {}),
      Keys: change.Keys as NonNullable<DynamoDBRecord['dynamodb']>['Keys'],
      NewImage: change.NewImage as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'],
      SequenceNumber: change.SequenceNumber,
      SizeBytes: change.SizeBytes,
      StreamViewType: change.StreamViewType as NonNullable<DynamoDBRecord['dynamodb']>['StreamViewType'],
    },
  };
}

export async function startStreamPoller(options: {
  endpoint: string;
  tableName: string;
  handlerPath: string;
  intervalMs?: number;
}): Promise<StreamPoller> {
  const config = { endpoint: options.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS };
  const tables = new DynamoDBClient(config);
  const streams = new DynamoDBStreamsClient(config);
  const described = await tables.send(new DescribeTableCommand({ TableName: options.tableName }));
  const streamArn = described.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${options.tableName} has no stream`);
  const handler = (
    (await import(pathToFileURL(join(ROOT, 'functions', `${options.handlerPath}.ts`)).href)) as {
      handler: StreamHandler;
    }
  ).handler;
  /** Shard id → its next iterator (null: the shard is closed and read to its end). */
  const iterators = new Map<string, string | null>();
  let first = true;

  const discover = async () => {
    const stream = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of stream.StreamDescription?.Shards ?? []) {
      if (!shard.ShardId || iterators.has(shard.ShardId)) continue;
      const out = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shard.ShardId,
          ShardIteratorType: first ? 'LATEST' : 'TRIM_HORIZON',
        }),
      );
      iterators.set(shard.ShardId, out.ShardIterator ?? null);
    }
    first = false;
  };

  const poll = async () => {
    await discover();
    const records: DynamoDBRecord[] = [];
    for (const [shardId, iterator] of iterators) {
      if (!iterator) continue;
      let next: string | null = iterator;
      // Drain the shard: one GetRecords returns at most 1 000 records.
      for (let page = 0; next && page < 50; page++) {
        const out: GetRecordsCommandOutput = await streams.send(
          new GetRecordsCommand({ ShardIterator: next, Limit: 1000 }),
        );
        records.push(...(out.Records ?? []).map((r: StreamRecord) => toLambdaRecord(r, streamArn)));
        next = out.NextShardIterator ?? null;
        if ((out.Records ?? []).length < 1000) break;
      }
      iterators.set(shardId, next);
    }
    if (records.length > 0) await asFunction(options.handlerPath, () => handler({ Records: records }));
  };

  await discover();
  let stopped = false;
  let running: Promise<void> | undefined;
  // A poll that takes longer than the interval is not overlapped by the next one.
  const timer = setInterval(() => {
    if (stopped || running) return;
    running = poll()
      .catch((error: unknown) => console.error('stream poll failed', error))
      .finally(() => {
        running = undefined;
      });
  }, options.intervalMs ?? 1000);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
      tables.destroy();
      streams.destroy();
    },
  };
}
