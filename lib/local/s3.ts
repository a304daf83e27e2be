/**
 * S3 in the host's own process (s3rver), so that an upload raises the same ObjectCreated event the cloud bucket sends
 * to the upload trigger: the host hands it to functions/workers/uploads.ts exactly as Lambda would.
 */
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { S3Event } from 'aws-lambda';
// s3rver ships no types.
// @ts-expect-error
import S3rver from 's3rver';
import { ROOT } from '#lib/paths';
import { asFunction } from '#shared/local-invocation';

export interface LocalS3 {
  endpoint: string;
  stop(): Promise<void>;
}

export async function startLocalS3(directory: string, buckets: string[]): Promise<LocalS3> {
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory,
    silent: true,
    // A browser or curl PUT to a presigned URL may add headers the signature did not cover; S3 judges that in the
    // cloud, and the unit tests check the presigned parameters themselves.
    allowMismatchedSignatures: true,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  const address = (await server.run()) as AddressInfo;
  const trigger = import(pathToFileURL(join(ROOT, 'functions', 'workers', 'uploads.ts')).href) as Promise<{
    handler: (event: S3Event) => Promise<void>;
  }>;
  const pending = new Set<Promise<void>>();
  server.on('event', (event: S3Event) => {
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
