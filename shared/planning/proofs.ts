/**
 * Proofs of delivery (contract 4.8, X21): a driver declares a photo's type and size, gets a presigned PUT whose
 * `Content-Type` and `Content-Length` are signed in (S3 refuses any other upload with it), and names the proof in a
 * `delivered` or `failed` event (X20), which checks that the object is there as declared. Objects live under
 * `proofs/<org_id>/` of the upload bucket (`proofs/freelance/` for a driver of no organisation), which a lifecycle rule
 * expires (lib/stacks/data-stack.ts); X22 shows them as signed GET URLs.
 *
 * Bounds (issue 42 items 3 and 6): X21 is open to a driver holding a runsheet assigned or in progress, who holds at
 * most `OPEN_PROOFS_LIMIT` proofs not yet named by an event (a proof stops counting once named, or an hour after its
 * declaration). A proof is named by one event only, and its bytes cannot change once named: naming copies the object
 * (server-side) to a key of its own that no presigned URL reaches, checks the copy against the declaration, and X22
 * serves the copy. Why a copy and not `If-None-Match: *` signed into the PUT: the copy holds on every S3 the service
 * meets (S3 itself, the local stand-in s3rver, and the `S3_ENDPOINT` servers moto and MinIO, where conditional
 * writes are missing or partial), needs nothing of the driver's app, and fixes the bytes at the moment the contract
 * names, when the event names them; it costs one server-side copy of at most 10 MiB per proof named.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, getAll, isConditionalFailure, mainTableName } from '#shared/db/client';
import { conflict, type FieldError, invalidInput, limitExceeded } from '#shared/errors';
import { newObjectId } from '#shared/ids';
import { driverRunsheetsPartition, openProofsKey, proofKey } from '#shared/planning/keys';
import { copyObject, headObject, presignGet, presignPut, uploadBucket } from '#shared/ports/object-storage';

/** How long a proof's upload URL and its download URLs stay valid. */
export const PROOF_URL_TTL_SECONDS = 15 * 60;
/** How long a proof is kept: the bucket's lifecycle rule (RETENTION.proofs) and its record's TTL agree. */
export const PROOF_RETENTION_DAYS = 365;

/** How many proofs not yet named by an event a driver may hold (X21; contract 4.8). */
export const OPEN_PROOFS_LIMIT = 20;
/** How long a declared proof counts against the quota unless an event names it first. */
export const OPEN_PROOF_WINDOW_MS = 60 * 60 * 1000;

export interface ProofRecord {
  id: string;
  driver_id: string;
  org_id: string | null;
  content_type: string;
  size: number;
  object_key: string;
  created_at: string;
  /** The event that named it (`<runsheet>:<task>:<type>:<happened_at>`), once named. */
  named_by?: string;
  /** The copy made when the event named it: what X22 serves. */
  named_key?: string;
}

/**
 * Does the driver hold a runsheet assigned or in progress? Its list of runsheets under way (GSI1, keys only; a
 * completed runsheet leaves it, a cancelled or withdrawn one is deleted) and their claims read consistently, a page
 * at a time until one is found. The index lags a fresh assignment by a moment: asked again once, 250 ms later.
 */
async function holdsRunsheetUnderWay(driverId: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 250));
    let start: Record<string, unknown> | undefined;
    do {
      const page = await db().send(
        new QueryCommand({
          TableName: mainTableName(),
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk',
          ExpressionAttributeValues: { ':pk': driverRunsheetsPartition(driverId) },
          ProjectionExpression: 'PK, SK',
          Limit: 25,
          ExclusiveStartKey: start,
        }),
      );
      const keys = (page.Items ?? []).map((item) => ({ PK: String(item['PK']), SK: String(item['SK']) }));
      const claims = await getAll<{ driver_id?: string; completed_at?: string }>(mainTableName(), keys, {
        ProjectionExpression: 'driver_id, completed_at',
        ConsistentRead: true,
      });
      if (claims.some((claim) => claim.driver_id === driverId && !claim.completed_at)) return true;
      start = page.LastEvaluatedKey;
    } while (start);
  }
  return false;
}

/**
 * Takes one of the driver's `OPEN_PROOFS_LIMIT` places for a new proof: one conditional write (the map's size below
 * the limit) in the usual case, so simultaneous declarations cannot pass the limit together. When the map is full,
 * the places of proofs named since, or declared more than an hour ago, are given back and the write tried again;
 * when all are still open, a 429 whose Retry-After is when the oldest stops counting.
 */
async function takeOpenProofPlace(driverId: string, proofId: string, nowMs: number): Promise<void> {
  const Key = openProofsKey(driverId);
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      await db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key,
          UpdateExpression: 'SET #open.#id = :now',
          ConditionExpression: 'size(#open) < :limit',
          ExpressionAttributeNames: { '#open': 'open', '#id': proofId },
          ExpressionAttributeValues: { ':now': nowMs, ':limit': OPEN_PROOFS_LIMIT },
        }),
      );
      return;
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
    const item = (await db().send(new GetCommand({ TableName: mainTableName(), Key, ConsistentRead: true }))).Item;
    if (!item) {
      try {
        await db().send(
          new PutCommand({
            TableName: mainTableName(),
            Item: { ...Key, entity: 'open_proofs', open: { [proofId]: nowMs } },
            ConditionExpression: 'attribute_not_exists(PK)',
          }),
        );
        return;
      } catch (error) {
        if (!isConditionalFailure(error)) throw error;
        continue; // another declaration made it first: take a place in it
      }
    }
    const open = Object.entries((item['open'] ?? {}) as Record<string, number>);
    // Not full (any more): the write failed on a map another declaration made or emptied meanwhile; try again.
    if (open.length < OPEN_PROOFS_LIMIT) continue;
    const stale = open.filter(([, at]) => nowMs - Number(at) >= OPEN_PROOF_WINDOW_MS).map(([id]) => id);
    const live = open.filter(([id]) => !stale.includes(id));
    const records = await getAll<ProofRecord>(
      mainTableName(),
      live.map(([id]) => proofKey(id)),
      { ProjectionExpression: 'id, named_by', ConsistentRead: true },
    );
    const named = records.filter((record) => record.named_by).map((record) => record.id);
    const done = [...stale, ...named];
    if (done.length === 0) {
      const oldest = Math.min(...live.map(([, at]) => Number(at)));
      throw limitExceeded(
        `you hold ${live.length} proofs that no event has named yet (at most ${OPEN_PROOFS_LIMIT}): name them in a ` +
          'delivered or failed event, or wait until the oldest was declared an hour ago',
        Math.max(1, Math.ceil((oldest + OPEN_PROOF_WINDOW_MS - nowMs) / 1000)),
      );
    }
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key,
        UpdateExpression: `REMOVE ${done.map((_, i) => `#open.#d${i}`).join(', ')}`,
        ExpressionAttributeNames: { '#open': 'open', ...Object.fromEntries(done.map((id, i) => [`#d${i}`, id])) },
      }),
    );
  }
  throw conflict('your proofs kept changing while this one was declared; retry');
}

/** X21: a driver with a runsheet under way and a free place; the proof's record, then its presigned PUT. */
export async function declareProof(caller: Caller, declared: { content_type: string; size: number }) {
  if (!(await holdsRunsheetUnderWay(caller.id))) {
    throw conflict(
      'you hold no runsheet assigned or in progress: proofs are declared for the tasks of a runsheet under way',
      'no_runsheet',
    );
  }
  const id = newObjectId();
  await takeOpenProofPlace(caller.id, id, clock.nowMs());
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

/** A proof an event is about to name: its record and the copy X22 will serve. */
export interface NamedProof {
  id: string;
  namedKey: string;
}

/**
 * X20's check of the proofs an event names: each declared by this driver (X21), named by no other event, uploaded,
 * and of the declared type and size. Each is copied first to a key of its own (`<object_key>.named.<id>`, which no
 * presigned URL reaches) and the copy is what is checked and, once the event commits, served: a later PUT to the
 * upload URL changes nothing that was named. Every failing id is a 400 at its path (`proof_ids[i]`), all of them in
 * one answer. The event's transaction then marks each record named, on the condition that none is (`namingWrites`).
 */
export async function checkProofs(caller: Caller, ids: readonly string[]): Promise<NamedProof[]> {
  if (ids.length === 0) return [];
  const records = await getAll<ProofRecord>(mainTableName(), ids.map(proofKey), { ConsistentRead: true });
  const recordOf = new Map(records.map((r) => [r.id, r]));
  const errors: FieldError[] = [];
  const named: NamedProof[] = [];
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
      if (record.named_by) {
        errors.push({ path, message: namedAlready });
        return;
      }
      const namedKey = `${record.object_key}.named.${newObjectId()}`;
      try {
        await copyObject({
          Bucket: uploadBucket(),
          Key: namedKey,
          CopySource: `${uploadBucket()}/${record.object_key}`,
          MetadataDirective: 'COPY',
        });
        const head = await headObject({ Bucket: uploadBucket(), Key: namedKey });
        const type = head.ContentType ?? 'no content type';
        const size = Number(head.ContentLength ?? -1);
        if (type !== record.content_type || size !== record.size) {
          errors.push({
            path,
            message: `the uploaded object (${type}, ${size} bytes) does not match its declaration (${record.content_type}, ${record.size} bytes)`,
          });
          return;
        }
        named.push({ id, namedKey });
      } catch (error) {
        if (!isMissing(error)) throw error;
        errors.push({ path, message: 'was declared but its photo is not uploaded yet (PUT it to its upload_url)' });
      }
    }),
  );
  if (errors.length > 0) {
    errors.sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
    throw invalidInput(errors);
  }
  return ids.map((id) => named.find((proof) => proof.id === id)!);
}

const namedAlready = 'is named by another event already: a proof belongs to one event (declare a new one)';

/**
 * The writes that name the proofs, for the event's transaction: each record gets the event and its copy, on the
 * condition that no event named it meanwhile. `namingRefusal` turns a cancelled one into the 400 at its path.
 */
export const namingWrites = (caller: Caller, proofs: readonly NamedProof[], event: string, now: string) =>
  proofs.map((proof) => ({
    Update: {
      TableName: mainTableName(),
      Key: proofKey(proof.id),
      UpdateExpression: 'SET named_by = :event, named_key = :key, named_at = :now',
      ConditionExpression: 'driver_id = :me AND attribute_not_exists(named_by)',
      ExpressionAttributeValues: { ':event': event, ':key': proof.namedKey, ':now': now, ':me': caller.id },
    },
  }));

/** The 400 of proofs (by their index in the event) that another event named between the check and the write. */
export const namingRefusal = (indexes: readonly number[]) =>
  invalidInput(indexes.map((i) => ({ path: `proof_ids[${i}]`, message: namedAlready })));

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
        url: await presignGet(uploadBucket(), record.named_key ?? record.object_key, PROOF_URL_TTL_SECONDS),
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
