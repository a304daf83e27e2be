// The S3 trigger: every object created under uploads/ has its size and MD5 recorded on its upload (idempotent).
import type { S3Event } from 'aws-lambda';
import { recordUploadedObject } from '#shared/imports/uploads';

export const handler = async (event: S3Event): Promise<void> => {
  for (const record of event.Records) {
    if (!record.eventName.startsWith('ObjectCreated:')) continue;
    // S3 event keys are URL-encoded, spaces as '+'.
    const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));
    await recordUploadedObject(key, record.s3.object.size ?? 0, record.s3.object.eTag);
  }
};
