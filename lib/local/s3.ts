/**
 * S3 in the host's own process (s3rver), so that an upload raises the same ObjectCreated event the cloud bucket sends
 * to the upload trigger: the host hands it to functions/workers/uploads.ts exactly as Lambda would. It listens on one
 * port across restarts (`S3_PORT`), so awscli, boto3 and presigned URLs issued before a restart keep working.
 *
 * With `S3_ENDPOINT` (any S3-compatible server: moto, MinIO, …) nothing raises events, so `attachExternalS3` creates
 * the bucket if it is missing and watches `uploads/` instead, handing each new or changed object to the same trigger.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { S3Event } from 'aws-lambda';
// s3rver ships no types.
// @ts-expect-error
import S3rver from 's3rver';
import { LOCAL_CREDENTIALS, refusalOf } from '#lib/local/s3-signatures';
import { ROOT } from '#lib/paths';
import { asFunction } from '#shared/local-invocation';

export interface LocalS3 {
  endpoint: string;
  stop(): Promise<void>;
}

const uploadTrigger = () =>
  import(pathToFileURL(join(ROOT, 'functions', 'workers', 'uploads.ts')).href) as Promise<{
    handler: (event: S3Event) => Promise<void>;
  }>;

const S3Error = createRequire(import.meta.url)('s3rver/lib/models/error') as new (
  code: string,
  message: string,
) => Error;

interface KoaContext {
  method: string;
  req: { url?: string; headers: import('node:http').IncomingHttpHeaders };
}

/** s3rver's first middleware: S3's verdict on the signature (an S3 error, XML, as S3 answers it) before any route. */
const checkSignature = async (ctx: KoaContext, next: () => Promise<unknown>) => {
  // A CORS preflight carries no signature, in S3 too.
  if (ctx.method === 'OPTIONS') return next();
  const refusal = await refusalOf(ctx.method, ctx.req.url ?? '/', ctx.req.headers, LOCAL_CREDENTIALS);
  if (refusal) throw new S3Error(refusal.code, refusal.message);
  return next();
};

/**
 * s3rver on `port` with its buckets, signatures checked. Without `trigger: false` (the test runner's shared server),
 * an object created under `uploads/` is handed to the upload trigger in this process.
 */
export async function startLocalS3(
  directory: string,
  buckets: string[],
  port = 0,
  options: { trigger?: boolean } = {},
): Promise<LocalS3> {
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({
    port,
    address: '127.0.0.1',
    directory,
    silent: true,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  server.middleware.unshift(checkSignature);
  const address = (await server.run()) as AddressInfo;
  const trigger = options.trigger === false ? undefined : uploadTrigger();
  const pending = new Set<Promise<void>>();
  server.on('event', (event: S3Event) => {
    if (!trigger) return;
    const keys = event.Records.map((r) => decodeURIComponent(r.s3.object.key.replace(/\+/g, ' ')));
    if (!keys.some((key) => key.startsWith('uploads/'))) return;
    const run = trigger
      .then(({ handler }) => asFunction('workers/uploads', () => handler(event)))
      .catch((error: unknown) => console.error('upload trigger failed', error))
      .finally(() => pending.delete(run));
    pending.add(run);
  });
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    stop: async () => {
      await Promise.all([...pending]);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The ObjectCreated event S3 would send for one object (the fields the upload trigger reads). */
const createdEvent = (bucket: string, key: string, size: number, eTag: string): S3Event =>
  ({
    Records: [
      {
        eventName: 'ObjectCreated:Put',
        s3: { bucket: { name: bucket }, object: { key: encodeURIComponent(key).replace(/%2F/g, '/'), size, eTag } },
      },
    ],
  }) as unknown as S3Event;

/**
 * An external S3-compatible server: the bucket is created if missing, and `uploads/` is listed every `intervalMs`;
 * each object not seen before with its ETag is recorded by the upload trigger (which is idempotent, so a restart that
 * sees every object again changes nothing).
 */
export async function attachExternalS3(endpoint: string, bucket: string, intervalMs = 1000): Promise<LocalS3> {
  // Loaded here: the in-process stand-in (and the test runner's child, lib/local/s3-server.ts) never needs the SDK.
  const { CreateBucketCommand, ListObjectsV2Command, S3Client } = await import('@aws-sdk/client-s3');
  const s3 = new S3Client({ endpoint, forcePathStyle: true, region: process.env['AWS_REGION'] ?? 'us-east-1' });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const name = (error as Error).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  }
  const { handler } = await uploadTrigger();
  const seen = new Map<string, string>();
  let stopped = false;
  const poll = async () => {
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: 'uploads/', ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        if (!object.Key || !object.ETag || seen.get(object.Key) === object.ETag) continue;
        await asFunction('workers/uploads', () =>
          handler(createdEvent(bucket, object.Key!, object.Size ?? 0, object.ETag!.replace(/"/g, ''))),
        );
        seen.set(object.Key, object.ETag);
      }
      token = page.NextContinuationToken;
    } while (token && !stopped);
  };
  let running = poll().catch((error: unknown) => console.error('upload watch failed', error));
  await running;
  const timer = setInterval(() => {
    running = running.then(() =>
      stopped ? undefined : poll().catch((error: unknown) => console.error('upload watch failed', error)),
    );
  }, intervalMs);
  timer.unref();
  return {
    endpoint,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
      s3.destroy();
    },
  };
}
