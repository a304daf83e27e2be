/**
 * `Idempotency-Key` on POST (contract section 1) through Powertools idempotency: the first successful response is
 * stored for 24 hours and replayed for a repeat with the same key and body; the same key with another body is a 409.
 * Keys are scoped to the caller and the operation, so two callers can never collide.
 */
import { createHash } from 'node:crypto';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { Context } from 'aws-lambda';
import { rawDb } from '#shared/db/client';
import { conflict, invalidField } from '#shared/http/problems';
import type { Reply } from '#shared/http/responses';

let persistence: DynamoDBPersistenceLayer | undefined;

function store(): DynamoDBPersistenceLayer {
  const tableName = process.env['IDEMPOTENCY_TABLE'];
  if (!tableName) throw new Error('missing required environment variable IDEMPOTENCY_TABLE');
  persistence ??= new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: rawDb() });
  return persistence;
}

export interface IdempotentCall {
  key: string;
  scope: string;
  rawBody: string;
  context?: Context;
}

export async function runIdempotently(call: IdempotentCall, run: () => Promise<Reply>): Promise<Reply> {
  if (call.key.length === 0 || call.key.length > 255) {
    throw invalidField('header.idempotency-key', 'must be 1 to 255 characters');
  }
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'key',
    payloadValidationJmesPath: 'payload',
    expiresAfterSeconds: 24 * 3600,
    throwOnNoIdempotencyKey: true,
  });
  if (call.context) config.registerLambdaContext(call.context);
  const idempotent = makeIdempotent(async (_record: { key: string; payload: string }) => run(), {
    persistenceStore: store(),
    config,
  });
  try {
    return await idempotent({
      key: `${call.scope}#${call.key}`,
      payload: createHash('sha256').update(call.rawBody).digest('hex'),
    });
  } catch (error) {
    if (error instanceof IdempotencyValidationError) {
      throw conflict('this Idempotency-Key was used with another request body', 'idempotency_key_reused');
    }
    if (error instanceof IdempotencyAlreadyInProgressError) {
      throw conflict('a request with this Idempotency-Key is still in progress; retry shortly');
    }
    throw error;
  }
}
