/**
 * The worker's look at a file before it reads it (issue 23.4): an empty object is known from its HEAD and never
 * range-read (s3rver answers that range with a bodyless 206 that timed out; S3 with 416), and a 416 reads as empty.
 * The end-to-end run of an empty file through s3rver is in test/e2e/imports.test.ts.
 */
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { FileProblem } from '../../shared/imports/csv-text.ts';
import type { FileData } from '../../shared/imports/jobs.ts';
import { classify } from '../../shared/imports/runner.ts';

const file = {
  file_name: 'tasks.csv',
  storage_upload_bucket: 'dispatch-uploads',
  storage_upload_key: 'uploads/org/000000000000000000000000/tasks.csv',
} as FileData;

const s3 = mockClient(S3Client);
afterEach(() => s3.reset());

describe('classifying an import file', () => {
  it('fails an empty object from its HEAD, without a ranged read', async () => {
    s3.on(HeadObjectCommand).resolves({ ContentLength: 0, ETag: '"d41d8cd98f00b204e9800998ecf8427e"' });
    s3.on(GetObjectCommand).rejects(new Error('a ranged read of an empty object'));
    const failure = classify([file]).catch((error: unknown) => error);
    expect(await failure).toBeInstanceOf(FileProblem);
    expect(((await failure) as Error).message).toMatch(/^tasks\.csv: the file is empty \(0 bytes\): save it /);
    expect(s3.commandCalls(GetObjectCommand)).toHaveLength(0);
  });

  it("reads S3's 416 to a range as an empty file", async () => {
    s3.on(HeadObjectCommand).resolves({ ContentLength: 12 });
    s3.on(GetObjectCommand).rejects(
      Object.assign(new Error('The requested range is not satisfiable'), {
        name: 'InvalidRange',
        $metadata: { httpStatusCode: 416 },
      }),
    );
    await expect(classify([file])).rejects.toThrow(/^tasks\.csv: the file is empty \(0 bytes\)/);
  });
});
