/**
 * Object storage (S3; s3rver locally). One client per container; locally it points at the emulator with path-style
 * addressing. Presigned URLs are checked by S3 itself in the cloud (s3rver does not check signatures).
 */
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

let client: S3Client | undefined;

export function s3(): S3Client {
  if (!client) {
    const endpoint = process.env['S3_ENDPOINT'];
    client = new S3Client(endpoint ? { endpoint, forcePathStyle: true } : {});
  }
  return client;
}

export const uploadBucket = (): string => {
  const bucket = process.env['UPLOAD_BUCKET'];
  if (!bucket) throw new Error('missing required environment variable UPLOAD_BUCKET');
  return bucket;
};

export function presignGet(bucket: string, key: string, expiresInSeconds: number): Promise<string> {
  return getSignedUrl(s3(), new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: expiresInSeconds });
}

const S3_LINK = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(.+)$/;

/** Replaces every `s3://<bucket>/<key>` string inside `value` (at any depth) with a presigned HTTPS URL. */
export async function presignLinks(value: unknown, expiresInSeconds: number): Promise<unknown> {
  if (typeof value === 'string') {
    const match = S3_LINK.exec(value);
    return match ? presignGet(match[1]!, match[2]!, expiresInSeconds) : value;
  }
  if (Array.isArray(value)) return Promise.all(value.map((item) => presignLinks(item, expiresInSeconds)));
  if (value && typeof value === 'object') {
    const entries = await Promise.all(
      Object.entries(value).map(async ([key, item]) => [key, await presignLinks(item, expiresInSeconds)] as const),
    );
    return Object.fromEntries(entries);
  }
  return value;
}
