/**
 * Files of import jobs: presigned uploads (I1), uploads through the API (I3), what the S3 trigger records about each
 * uploaded object (size, MD5), the checks a job's files must pass, and downloads (I8).
 *
 * Keys are `uploads/<org id | ops>/<upload id>/<file name>`: the second segment says who owns the object. A key a
 * caller names must have exactly those four segments, none of them `.`, `..` or empty (shared/imports/object-keys.ts),
 * and the upload it names is found by its id and then compared by full key and owner.
 */
import { createHash } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Caller, hasRole, hasScope, seesAllOrganisations } from '#shared/auth/caller';
import { isDependencyFailure } from '#shared/aws/faults';
import { clock } from '#shared/clock';
import { db, mainTableName } from '#shared/db/client';
import { forbidden, invalidAt } from '#shared/errors';
import { recordObjectId } from '#shared/ids';
import type { FileData } from '#shared/imports/jobs';
import { isSafeObjectKey } from '#shared/imports/object-keys';
import { getObject, headObject, presignGet, presignPut, putObject, uploadBucket } from '#shared/ports/object-storage';

export const UPLOAD_URL_TTL_SECONDS = 3600;
export const OPS_SCOPE = 'ops';
/**
 * The one content type of an import file, fixed by the service (contract 4.9): I1's presigned PUT signs it and I3
 * stores it whatever the caller's part said, and I8 serves it, never a type a caller chose.
 */
export const IMPORT_FILE_TYPE = 'text/csv';

const uploadKey = (uploadId: string) => ({ PK: `UPLOAD#${uploadId}`, SK: 'FILE' });

/** `uploads/<scope>/<upload id>/<file name>`, four plain segments, or nothing. */
function parseUploadKey(key: string): { scope: string; uploadId: string; name: string } | undefined {
  if (!isSafeObjectKey(key)) return undefined;
  const match = /^uploads\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(key);
  return match ? { scope: match[1]!, uploadId: match[2]!, name: match[3]! } : undefined;
}

/** Whose objects a caller may name: family 1 callers `ops` (and any organisation), family 2 their own organisation. */
export function uploadScope(caller: Caller, family: 'ops' | 'org'): string {
  if (family === 'ops') return OPS_SCOPE;
  if (!caller.orgId) throw forbidden('your account belongs to no organisation');
  return caller.orgId;
}

/** 1 to 200 characters, no slash, backslash or control character. */
const isSafeName = (name: string) =>
  name.length >= 1 && name.length <= 200 && !/[/\\]/.test(name) && ![...name].some((c) => c.charCodeAt(0) < 32);

export function checkFileName(name: string, field: string): string {
  const trimmed = name.trim();
  // Not `.`, `..` or only dots, even percent-encoded: the name becomes the last segment of an object key.
  if (!isSafeName(trimmed) || !isSafeObjectKey(trimmed)) {
    throw invalidAt(
      field,
      'must be a file name of 1 to 200 characters without slashes, control characters or only dots',
    );
  }
  return trimmed;
}

/** `/v1/files?…`: where the service serves an object back (I8). */
const downloadUrl = (bucket: string, key: string) =>
  `/v1/files?bucket=${encodeURIComponent(bucket)}&object_key=${encodeURIComponent(key)}`;

/** I1. */
export async function presignUpload(caller: Caller, family: 'ops' | 'org', fileName: string) {
  const scope = uploadScope(caller, family);
  const name = checkFileName(fileName, 'query.filename');
  const key = `uploads/${scope}/${recordObjectId()}/${name}`;
  const url = await presignPut(uploadBucket(), key, UPLOAD_URL_TTL_SECONDS, IMPORT_FILE_TYPE);
  const file: FileData = {
    file_name: name,
    file_size: null,
    storage_upload_bucket: uploadBucket(),
    storage_upload_key: key,
    url,
    checksum: null,
    checksum_method: 'MD5',
  };
  return { file, server_time: clock.nowIso() };
}

/** What the S3 trigger saw of one object under `uploads/` (idempotent: a repeated event writes the same). */
export async function recordUploadedObject(key: string, size: number, eTag: string | undefined): Promise<void> {
  const parsed = parseUploadKey(key);
  if (!parsed) return;
  const { scope, uploadId, name } = parsed;
  let checksum = eTag?.replace(/"/g, '');
  if (!checksum || !/^[0-9a-f]{32}$/.test(checksum)) {
    // A multipart upload's ETag is not the MD5 of the object: compute it from the bytes.
    const object = await getObject({ Bucket: uploadBucket(), Key: key });
    const hash = createHash('md5');
    for await (const chunk of object.Body as AsyncIterable<Uint8Array>) hash.update(chunk);
    checksum = hash.digest('hex');
  }
  await db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: uploadKey(uploadId),
      UpdateExpression:
        'SET entity = :e, org_scope = :scope, object_key = :key, file_name = :name, file_size = :size, checksum = :md5, uploaded_at = :now',
      ExpressionAttributeValues: {
        ':e': 'upload',
        ':scope': scope,
        ':key': key,
        ':name': name,
        ':size': size,
        ':md5': checksum,
        ':now': clock.nowIso(),
      },
    }),
  );
}

/**
 * The files of a new job (I4): each must be in the upload bucket, under a prefix the caller owns, and uploaded.
 * Size and checksum come from what the trigger recorded, or from the object itself.
 */
export async function checkJobFiles(
  files: { storage_upload_bucket?: string | undefined; storage_upload_key: string; file_name?: string | undefined }[],
  scopes: string[],
): Promise<FileData[]> {
  const bucket = uploadBucket();
  return Promise.all(
    files.map(async (file, i) => {
      const field = `files[${i}].storage_upload_key`;
      if (file.storage_upload_bucket !== undefined && file.storage_upload_bucket !== bucket) {
        throw invalidAt(`files[${i}].storage_upload_bucket`, `must be ${bucket}`);
      }
      const parsed = parseUploadKey(file.storage_upload_key);
      if (!parsed || !scopes.includes(parsed.scope)) throw invalidAt(field, 'names no upload of yours');
      const recorded = (
        await db().send(new GetCommand({ TableName: mainTableName(), Key: uploadKey(parsed.uploadId) }))
      ).Item;
      // The record of that upload id must be this very object, under a prefix of the caller's: another upload id
      // under the caller's prefix (another organisation's, say) names nothing of theirs.
      if (
        recorded &&
        (recorded['object_key'] !== file.storage_upload_key || !scopes.includes(recorded['org_scope'] as string))
      ) {
        throw invalidAt(field, 'names no upload of yours');
      }
      let size = recorded?.['file_size'] as number | undefined;
      let checksum = recorded?.['checksum'] as string | undefined;
      if (size === undefined) {
        try {
          const head = await headObject({ Bucket: bucket, Key: file.storage_upload_key });
          size = head.ContentLength ?? 0;
          checksum = head.ETag?.replace(/"/g, '');
        } catch (error) {
          if (isDependencyFailure(error)) throw error;
          throw invalidAt(field, 'was not uploaded');
        }
      }
      return {
        file_name: file.file_name ?? parsed.name,
        file_size: size,
        storage_upload_bucket: bucket,
        storage_upload_key: file.storage_upload_key,
        url: downloadUrl(bucket, file.storage_upload_key),
        checksum: checksum ?? null,
        checksum_method: 'MD5',
      };
    }),
  );
}

/** I3: one uploaded file, written under the caller's prefix as text/csv (the type its part named is not kept). */
export async function storeUpload(scope: string, fileName: string, bytes: Buffer): Promise<FileData> {
  const name = checkFileName(fileName, 'files');
  const key = `uploads/${scope}/${recordObjectId()}/${name}`;
  const checksum = createHash('md5').update(bytes).digest('hex');
  await putObject({
    Bucket: uploadBucket(),
    Key: key,
    Body: bytes,
    ContentType: IMPORT_FILE_TYPE,
    ContentMD5: Buffer.from(checksum, 'hex').toString('base64'),
  });
  await recordUploadedObject(key, bytes.length, checksum);
  return {
    file_name: name,
    file_size: bytes.length,
    storage_upload_bucket: uploadBucket(),
    storage_upload_key: key,
    url: downloadUrl(uploadBucket(), key),
    checksum,
    checksum_method: 'MD5',
  };
}

/**
 * Objects a caller may download: their organisation's uploads and results; SysAdmin (and workers) any. Never a key
 * with `.`, `..` or empty segments (I8 refuses those with a 400 before this).
 */
function mayDownload(caller: Caller, key: string): boolean {
  if (!isSafeObjectKey(key)) return false;
  if (seesAllOrganisations(caller)) return true;
  // A partner reads its organisation's files with the scope `imports` only (contract section 3).
  if (hasRole(caller, 'Partner') && !hasScope(caller, 'imports')) return false;
  const owner = /^(?:uploads|results)\/([^/]+)\//.exec(key)?.[1];
  return owner !== undefined && owner === caller.orgId;
}

/**
 * The largest file I8 answers inline: the answer carries it base64-encoded (4 700 000 bytes become 6 266 668) inside
 * Lambda's 6 291 556-byte answer, with room for the headers; a larger file is a redirect to a presigned URL.
 */
export const INLINE_DOWNLOAD_BYTES = 4_700_000;

/** How I8 serves an object: as a download of the type its place in the bucket fixes, never its stored type. */
export interface Served {
  contentType: string;
  contentDisposition: string;
}

/**
 * `attachment` with the file name (RFC 6266): `filename="…"` in ASCII (other characters, quotes and backslashes as
 * `_`), and `filename*=UTF-8''…` (RFC 8187) with the exact name when that differs.
 */
export function attachment(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/gu, '_');
  if (ascii === fileName) return `attachment; filename="${ascii}"`;
  const exact = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

/** Import files are CSV, results JSON, anything else bytes; the file name is the key's last segment. */
export function servedAs(key: string): Served {
  const contentType = key.startsWith('uploads/')
    ? IMPORT_FILE_TYPE
    : key.startsWith('results/')
      ? 'application/json'
      : 'application/octet-stream';
  return { contentType, contentDisposition: attachment(key.slice(key.lastIndexOf('/') + 1)) };
}

export type Download =
  | { kind: 'bytes'; body: Buffer; served: Served }
  | { kind: 'redirect'; location: string; served: Served }
  | { kind: 'missing' };

/**
 * I8: an object the caller's organisation owns (anything else is as missing as an absent key), as a download
 * (servedAs): small objects inline, larger ones by a short-lived presigned link (a Lambda answer holds at most 6 MB)
 * whose signed overrides make S3 answer with the same type and disposition.
 */
export async function download(caller: Caller, bucket: string, key: string): Promise<Download> {
  if (bucket !== uploadBucket() || !mayDownload(caller, key)) return { kind: 'missing' };
  const served = servedAs(key);
  try {
    const head = await headObject({ Bucket: bucket, Key: key });
    if ((head.ContentLength ?? 0) > INLINE_DOWNLOAD_BYTES)
      return { kind: 'redirect', location: await presignGet(bucket, key, 300, served), served };
    const object = await getObject({ Bucket: bucket, Key: key });
    return { kind: 'bytes', body: Buffer.from(await object.Body!.transformToByteArray()), served };
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (
      status === 404 ||
      (error as { name?: string }).name === 'NotFound' ||
      (error as { name?: string }).name === 'NoSuchKey'
    ) {
      return { kind: 'missing' };
    }
    throw error;
  }
}
