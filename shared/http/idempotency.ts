/**
 * `Idempotency-Key` on POST (contract section 1) through Powertools idempotency: the first successful response is
 * stored for 24 hours and replayed for a repeat with the same key and body; the same key with another body is a 409.
 * Keys are scoped to the caller and the operation, so two callers can never collide; a public operation's scope holds
 * a hash of the credentials presented, and operations that issue credentials store nothing (idempotency-policy.ts).
 */
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyPersistenceLayerError,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { Context } from 'aws-lambda';
import { rawDb } from '#shared/db/client';
import { conflict, invalidField } from '#shared/http/problems';
import type { Reply } from '#shared/http/responses';
import { logger } from '#shared/log';

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
  /** A hash of the body as canonical JSON (payloadHash in idempotency-policy.ts). */
  payload: string;
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
  // A record left in progress by a request that failed (and could not delete it: the store was down) blocks a retry
  // until its in-progress expiry, which Powertools takes from the function's remaining time. Every request is
  // bounded to about 10 s by the clients' timeouts (shared/aws/wire.ts), so the expiry is capped at
  // IDEMPOTENCY_IN_PROGRESS_MS (10 s by default) rather than the function's 29 s timeout.
  const cap = Number(process.env['IDEMPOTENCY_IN_PROGRESS_MS'] ?? 10_000);
  const started = Date.now();
  const remaining = () => Math.max(0, cap - (Date.now() - started));
  config.registerLambdaContext({
    ...(call.context ?? {}),
    getRemainingTimeInMillis: () => Math.min(call.context?.getRemainingTimeInMillis() ?? cap, remaining()),
  } as Context);
  // The reply of this very call, once the domain has answered: if only storing it fails afterwards, the change has
  // been made, and answering 503 would send the client to retry something that is done (a 409 or a second copy).
  let answered: Reply | undefined;
  const idempotent = makeIdempotent(
    async (_record: { key: string; payload: string }) => {
      answered = await run();
      return answered;
    },
    {
      persistenceStore: store(),
      config,
    },
  );
  try {
    return await idempotent({
      key: `${call.scope}#${call.key}`,
      payload: call.payload,
    });
  } catch (error) {
    if (answered && error instanceof IdempotencyPersistenceLayerError) {
      // The record stays in progress and lapses within IDEMPOTENCY_IN_PROGRESS_MS; the client has its answer.
      logger.warn('idempotency record not completed; answering the reply of the change that was made', {
        error: error as Error,
      });
      return answered;
    }
    if (error instanceof IdempotencyValidationError) {
      throw conflict('this Idempotency-Key was used with another request body', 'idempotency_key_reused');
    }
    if (error instanceof IdempotencyAlreadyInProgressError) {
      const problem = conflict('a request with this Idempotency-Key is still in progress; retry shortly');
      problem.headers['Retry-After'] = '1';
      throw problem;
    }
    throw error;
  }
}
