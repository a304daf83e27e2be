/**
 * Proofs of delivery (contract 4.8, X21): a driver declares a photo's type and size, gets a presigned PUT whose
 * `Content-Type` and `Content-Length` are signed in (S3 refuses any other upload with it), and names the proof in a
 * `delivered` or `failed` event (X20), which checks that the object is there as declared. Objects live under
 * `proofs/<org_id>/` of the upload bucket (`proofs/freelance/` for a driver of no organisation), which a lifecycle rule
 * expires (lib/stacks/data-stack.ts); X22 shows them as signed GET URLs.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, getAll, mainTableName } from '#shared/db/client';
import { type FieldError, validationFailed } from '#shared/http/problems';
import { newObjectId } from '#shared/ids';
import { proofKey } from '#shared/planning/keys';
import { headObject, presignGet, presignPut, uploadBucket } from '#shared/ports/object-storage';

/** How long a proof's upload URL and its download URLs stay valid. */
export const PROOF_URL_TTL_SECONDS = 15 * 60;
/** How long a proof is kept: the bucket's lifecycle rule (RETENTION.proofs) and its record's TTL agree. */
export const PROOF_RETENTION_DAYS = 365;

export interface ProofRecord {
  id: string;
  driver_id: string;
  org_id: string | null;
  content_type: string;
  size: number;
  object_key: string;
  created_at: string;
}

/** X21: the proof's record, then its presigned PUT. */
export async function declareProof(caller: Caller, declared: { content_type: string; size: number }) {
  const id = newObjectId();
  const objectKey = `proofs/${caller.orgId ?? 'freelance'}/${id}`;
  const now = clock.nowMs();
  const record: ProofRecord = {
    id,
    driver_id: caller.id,
    org_id: caller.orgId ?? null,
    content_type: declared.content_type,
    size: declared.size,
    object_key: objectKey,
    created_at: new Date(now).toISOString(),
  };
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: {
        ...proofKey(id),
        entity: 'proof',
        ...record,
        expires_at: Math.floor(now / 1000) + PROOF_RETENTION_DAYS * 86_400,
      },
    }),
  );
  const uploadUrl = await presignPut(uploadBucket(), objectKey, PROOF_URL_TTL_SECONDS, declared.content_type, {
    contentLength: declared.size,
  });
  return {
    proof_id: id,
    upload_url: uploadUrl,
    expires_at: new Date(now + PROOF_URL_TTL_SECONDS * 1000).toISOString(),
  };
}

const isMissing = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
};

/**
 * X20's check of the proofs an event names: each declared by this driver (X21), uploaded, and of the declared type
 * and size (HeadObject). Every failing id is a 400 at its path (`proof_ids[i]`), all of them in one answer.
 */
export async function checkProofs(caller: Caller, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const records = await getAll<ProofRecord>(mainTableName(), ids.map(proofKey), { ConsistentRead: true });
  const recordOf = new Map(records.map((r) => [r.id, r]));
  const errors: FieldError[] = [];
  await Promise.all(
    ids.map(async (id, i) => {
      const path = `proof_ids[${i}]`;
      if (ids.indexOf(id) !== i) {
        errors.push({ path, message: 'repeats an earlier proof of this event' });
        return;
      }
      const record = recordOf.get(id);
      if (!record || record.driver_id !== caller.id) {
        errors.push({ path, message: 'names no proof you declared (POST /v1/driver/proofs)' });
        return;
      }
      try {
        const head = await headObject({ Bucket: uploadBucket(), Key: record.object_key });
        const type = head.ContentType ?? 'no content type';
        const size = Number(head.ContentLength ?? -1);
        if (type !== record.content_type || size !== record.size) {
          errors.push({
            path,
            message: `the uploaded object (${type}, ${size} bytes) does not match its declaration (${record.content_type}, ${record.size} bytes)`,
          });
        }
      } catch (error) {
        if (!isMissing(error)) throw error;
        errors.push({ path, message: 'was declared but its photo is not uploaded yet (PUT it to its upload_url)' });
      }
    }),
  );
  if (errors.length > 0) {
    errors.sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
    throw validationFailed(errors);
  }
}

/** X22: the proofs named, each with a signed GET URL (15 minutes); one batched read of their records. */
export async function proofViews(ids: readonly string[]) {
  if (ids.length === 0) return new Map<string, ProofView>();
  const records = await getAll<ProofRecord>(mainTableName(), [...new Set(ids)].map(proofKey));
  const expiresAt = new Date(clock.nowMs() + PROOF_URL_TTL_SECONDS * 1000).toISOString();
  const views = await Promise.all(
    records.map(
      async (record): Promise<ProofView> => ({
        id: record.id,
        content_type: record.content_type,
        size: record.size,
        url: await presignGet(uploadBucket(), record.object_key, PROOF_URL_TTL_SECONDS),
        expires_at: expiresAt,
      }),
    ),
  );
  return new Map(views.map((view) => [view.id, view]));
}

export interface ProofView {
  id: string;
  content_type: string;
  size: number;
  url: string;
  expires_at: string;
}
