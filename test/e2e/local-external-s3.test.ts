/**
 * Local mode with `S3_ENDPOINT` (contract section 5, issue 24.3): an external S3-compatible server (here a second
 * s3rver, which raises no events to this host) gets the service's bucket created if missing, and an upload there is
 * recorded as the S3 trigger would record it.
 */
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
// s3rver ships no types.
// @ts-expect-error
import S3rver from 's3rver';
import { describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../lib/local/emulators.ts';
import { startLocal, UPLOAD_BUCKET } from '../../lib/local/start.ts';
import { putUpload } from '../support/imports.ts';
import { CSV, created, merchantOn, options, running } from '../support/local-mode.ts';

describe('an external S3', () => {
  it('with S3_ENDPOINT: creates its bucket on that server and records uploads there as the trigger would', async () => {
    const external = new S3rver({
      port: 0,
      address: '127.0.0.1',
      directory: mkdtempSync(join(tmpdir(), 's3-')),
      silent: true,
    });
    const address = (await external.run()) as AddressInfo;
    running.push({ stop: () => new Promise<void>((done) => external.close(() => done())) });
    const endpoint = `http://127.0.0.1:${address.port}`;
    const s3 = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
    await expect(s3.send(new HeadBucketCommand({ Bucket: UPLOAD_BUCKET }))).rejects.toThrow();

    const host = await startLocal(options({ externalS3: endpoint }));
    running.push(host);
    expect(host.s3Endpoint).toBe(endpoint);
    await s3.send(new HeadBucketCommand({ Bucket: UPLOAD_BUCKET }));
    const merchant = await merchantOn(host);
    const file = await merchant.uploadUrl();
    expect(new URL(file.url).origin).toBe(endpoint);
    expect((await putUpload(file.url, CSV)).status).toBe(200);
    const job = await created(() => merchant.createJob(file.storage_upload_key));
    expect(job.status, JSON.stringify(job.body)).toBe(201);
  });
});
