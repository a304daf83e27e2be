/**
 * Object storage (S3; s3rver locally). The S3 client is loaded on first use and not bundled (the Lambda runtime
 * ships it): it is large, and most functions never touch a file. Locally it points at the emulator, path-style.
 * The presigner is bundled and imported statically (it is small, and a bundled module reached by `import()` would
 * make esbuild wrap the SDK it shares). Presigned URLs are checked by S3 itself in the cloud (s3rver does not check
 * signatures).
 */
import type {
  GetObjectCommandInput,
  GetObjectCommandOutput,
  HeadObjectCommandInput,
  HeadObjectCommandOutput,
  PutObjectCommandInput,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { wire } from '#shared/aws/wire';

type Sdk = typeof import('@aws-sdk/client-s3');
let loaded: Promise<{ sdk: Sdk; client: S3Client }> | undefined;

function storage() {
  loaded ??= import('@aws-sdk/client-s3').then((sdk) => {
    const endpoint = process.env['S3_ENDPOINT'];
    return { sdk, client: new sdk.S3Client({ ...wire(), ...(endpoint ? { endpoint, forcePathStyle: true } : {}) }) };
  });
  return loaded;
}

export const uploadBucket = (): string => {
  const bucket = process.env['UPLOAD_BUCKET'];
  if (!bucket) throw new Error('missing required environment variable UPLOAD_BUCKET');
  return bucket;
};

export async function putObject(input: PutObjectCommandInput): Promise<void> {
  const { sdk, client } = await storage();
  await client.send(new sdk.PutObjectCommand(input));
}

export async function getObject(input: GetObjectCommandInput): Promise<GetObjectCommandOutput> {
  const { sdk, client } = await storage();
  return client.send(new sdk.GetObjectCommand(input));
}

export async function headObject(input: HeadObjectCommandInput): Promise<HeadObjectCommandOutput> {
  const { sdk, client } = await storage();
  return client.send(new sdk.HeadObjectCommand(input));
}

async function presign(method: 'GET' | 'PUT', bucket: string, key: string, expiresIn: number) {
  const { sdk, client } = await storage();
  const input = { Bucket: bucket, Key: key };
  const command = method === 'GET' ? new sdk.GetObjectCommand(input) : new sdk.PutObjectCommand(input);
  return getSignedUrl(client, command, { expiresIn });
}

export const presignGet = (bucket: string, key: string, expiresInSeconds: number) =>
  presign('GET', bucket, key, expiresInSeconds);

export const presignPut = (bucket: string, key: string, expiresInSeconds: number) =>
  presign('PUT', bucket, key, expiresInSeconds);

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
