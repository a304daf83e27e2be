/**
 * Object storage (S3; s3rver locally). The S3 client is loaded on first use and not bundled (the Lambda runtime
 * ships it): it is large, and most functions never touch a file. Locally it points at the emulator, path-style.
 * The presigner is bundled and imported statically (it is small, and a bundled module reached by `import()` would
 * make esbuild wrap the SDK it shares). Presigned URLs are checked by S3 itself in the cloud, and locally by the S3
 * stand-in as S3 checks them (lib/local/s3-signatures.ts).
 */
import type {
  CopyObjectCommandInput,
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
    const client = new sdk.S3Client({
      ...wire(),
      // Checksums only where S3 requires one: by default the SDK puts into a presigned PUT URL the CRC32 of the
      // empty body it saw when signing (x-amz-checksum-crc32), and S3 refuses the real upload as a bad digest.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    });
    return { sdk, client };
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

/** A server-side copy within the bucket (S3's CopyObject: the bytes never pass through the function). */
export async function copyObject(input: CopyObjectCommandInput): Promise<void> {
  const { sdk, client } = await storage();
  await client.send(new sdk.CopyObjectCommand(input));
}

export async function headObject(input: HeadObjectCommandInput): Promise<HeadObjectCommandOutput> {
  const { sdk, client } = await storage();
  return client.send(new sdk.HeadObjectCommand(input));
}

/** What a presigned GET makes S3 answer in place of the object's stored headers (signed with the rest of the URL). */
export interface ResponseOverrides {
  contentType: string;
  contentDisposition: string;
}

/**
 * A presigned GET. With `overrides`, the URL carries `response-content-type` and `response-content-disposition`,
 * which S3 answers with instead of what the object was stored with; SigV4 signs every query parameter, so they cannot
 * be changed.
 */
export async function presignGet(
  bucket: string,
  key: string,
  expiresIn: number,
  overrides?: ResponseOverrides,
): Promise<string> {
  const { sdk, client } = await storage();
  const command = new sdk.GetObjectCommand({
    Bucket: bucket,
    Key: key,
    ...(overrides
      ? { ResponseContentType: overrides.contentType, ResponseContentDisposition: overrides.contentDisposition }
      : {}),
  });
  return getSignedUrl(client, command, { expiresIn });
}

/**
 * A presigned PUT that signs the `Content-Type` header (X-Amz-SignedHeaders names it): S3 refuses an upload sent with
 * any other type. With `contentLength`, the `Content-Length` header is signed too: S3 refuses a body of another size.
 */
export async function presignPut(
  bucket: string,
  key: string,
  expiresIn: number,
  contentType: string,
  options: { contentLength?: number } = {},
): Promise<string> {
  const { sdk, client } = await storage();
  const command = new sdk.PutObjectCommand({
    Bucket: bucket,
    Key: key,
    ContentType: contentType,
    ...(options.contentLength !== undefined ? { ContentLength: options.contentLength } : {}),
  });
  return getSignedUrl(client, command, {
    expiresIn,
    // Left out unless named: the presigner signs only `host` otherwise.
    signableHeaders: new Set(
      options.contentLength !== undefined ? ['content-type', 'content-length'] : ['content-type'],
    ),
  });
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
