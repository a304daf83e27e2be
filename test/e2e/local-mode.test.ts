/**
 * Local mode as a user meets it (contract section 5, issue 24.3): the in-process S3 keeps its port across restarts
 * (`S3_PORT`), so a presigned URL issued before a restart still works after it.
 */
import { describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/emulators.ts';
import { startLocal } from '../../lib/local/start.ts';
import { putUpload } from '../support/imports.ts';
import { CSV, created, merchantOn, options, running } from '../support/local-mode.ts';

describe('the local S3', () => {
  it('keeps its port across a restart: a presigned URL issued before it works after it', async () => {
    const s3Port = await freePort();
    const first = options({ s3Port });
    const before = await startLocal(first);
    expect(before.s3Endpoint).toBe(`http://127.0.0.1:${s3Port}`);
    const merchant = await merchantOn(before);
    const file = await merchant.uploadUrl();
    await before.stop();

    const after = await startLocal(first);
    running.push(after);
    expect(after.s3Endpoint).toBe(before.s3Endpoint);
    expect((await putUpload(file.url, CSV)).status).toBe(200);
    const job = await created(() => merchant.createJob(file.storage_upload_key, after));
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    expect((job.body as { upload_record: { files: { file_size: number }[] } }).upload_record.files[0]!.file_size).toBe(
      CSV.length,
    );
  });
});
