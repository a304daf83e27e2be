/**
 * The local S3 stand-in checks SigV4 as S3 does (issue 42 item 8, contract section 5): the test runner's shared
 * stand-in (lib/local/s3-server.ts, the same server `npm start` runs in process) refuses an unsigned listing, a
 * browser form's POST, a presigned PUT whose key, content type or length was changed and a presigned GET for another
 * key, each a 403 that stores nothing, while the SDK's own calls and unedited presigned URLs work.
 */
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../lib/local/emulators.ts';
import { UPLOAD_BUCKET } from '../../lib/local/start.ts';

const endpoint = inject('endpoints').s3;
const client = (credentials = LOCAL_CREDENTIALS) =>
  new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
const s3 = client();
afterAll(() => s3.destroy());

const run = randomBytes(4).toString('hex');
const key = (org: string, name: string) => `proofs/${org}-${run}/${name}`;
const BODY = Buffer.from('a photo of a parcel');

/** The URL the service gives a driver: a PUT with its content type and length signed in (shared/ports). */
const presignedPut = (objectKey: string, contentType = 'image/jpeg', length = BODY.length) =>
  getSignedUrl(
    s3,
    new PutObjectCommand({ Bucket: UPLOAD_BUCKET, Key: objectKey, ContentType: contentType, ContentLength: length }),
    {
      expiresIn: 900,
      signableHeaders: new Set(['content-type', 'content-length']),
    },
  );

const put = (url: string, body: Buffer, contentType = 'image/jpeg') =>
  fetch(url, { method: 'PUT', body, headers: { 'content-type': contentType } });

/** Whether the object exists, asked with a signed request. */
const stored = (objectKey: string) =>
  s3.send(new GetObjectCommand({ Bucket: UPLOAD_BUCKET, Key: objectKey })).then(
    () => true,
    (error: Error) => (error.name === 'NoSuchKey' ? false : Promise.reject(error)),
  );

const codeOf = async (response: Response) => /<Code>([^<]+)<\/Code>/.exec(await response.text())?.[1];

describe('the local S3 stand-in checks signatures as S3 does (issue 42 item 8)', () => {
  it("the SDK's signed calls work: put, get, list", async () => {
    await s3.send(new PutObjectCommand({ Bucket: UPLOAD_BUCKET, Key: key('org-a', 'sdk.txt'), Body: BODY }));
    const got = await s3.send(new GetObjectCommand({ Bucket: UPLOAD_BUCKET, Key: key('org-a', 'sdk.txt') }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(BODY)).toBe(true);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: UPLOAD_BUCKET, Prefix: `proofs/org-a-${run}/` }));
    expect(listed.Contents?.map((o) => o.Key)).toContain(key('org-a', 'sdk.txt'));
  });

  it('an unsigned listing, get or put is a 403 AccessDenied', async () => {
    await s3.send(new PutObjectCommand({ Bucket: UPLOAD_BUCKET, Key: key('org-a', 'secret.txt'), Body: BODY }));
    const listing = await fetch(`${endpoint}/${UPLOAD_BUCKET}?list-type=2`);
    expect(listing.status).toBe(403);
    expect(await codeOf(listing)).toBe('AccessDenied');
    const read = await fetch(`${endpoint}/${UPLOAD_BUCKET}/${key('org-a', 'secret.txt')}`);
    expect(read.status).toBe(403);
    const write = await put(`${endpoint}/${UPLOAD_BUCKET}/${key('org-a', 'planted.txt')}`, BODY);
    expect(write.status).toBe(403);
    expect(await stored(key('org-a', 'planted.txt'))).toBe(false);
  });

  it("a browser form's POST is a 403 and plants nothing", async () => {
    const form = new FormData();
    form.append('key', key('org-a', 'page.html'));
    form.append('Content-Type', 'text/html');
    form.append('file', new Blob(['<script>alert(1)</script>'], { type: 'text/html' }), 'page.html');
    const posted = await fetch(`${endpoint}/${UPLOAD_BUCKET}`, { method: 'POST', body: form });
    expect(posted.status).toBe(403);
    expect(await stored(key('org-a', 'page.html'))).toBe(false);
  });

  it('a signature made with another secret is a 403 SignatureDoesNotMatch', async () => {
    const stranger = client({ accessKeyId: LOCAL_CREDENTIALS.accessKeyId, secretAccessKey: 'not-the-secret' });
    const refused = await stranger.send(new ListObjectsV2Command({ Bucket: UPLOAD_BUCKET })).then(
      () => 'listed',
      (error: Error) => error.name,
    );
    stranger.destroy();
    expect(refused).toBe('SignatureDoesNotMatch');
  });

  it('a presigned PUT works as issued and is a 403 with another key, content type or length', async () => {
    const url = new URL(await presignedPut(key('org-a', 'photo.jpg')));

    const otherOrg = new URL(url);
    otherOrg.pathname = otherOrg.pathname.replace(`org-a-${run}`, `org-b-${run}`);
    const moved = await put(otherOrg.href, BODY);
    expect(moved.status).toBe(403);
    expect(await codeOf(moved)).toBe('SignatureDoesNotMatch');
    expect(await stored(key('org-b', 'photo.jpg'))).toBe(false);

    const retyped = await put(url.href, BODY, 'text/html');
    expect(retyped.status).toBe(403);
    const longer = await put(url.href, Buffer.concat([BODY, BODY]));
    expect(longer.status).toBe(403);
    expect(await stored(key('org-a', 'photo.jpg'))).toBe(false);

    const unsigned = new URL(url);
    unsigned.searchParams.delete('X-Amz-Signature');
    const incomplete = await put(unsigned.href, BODY);
    expect(incomplete.status).toBe(400);
    expect(await codeOf(incomplete)).toBe('AuthorizationQueryParametersError');

    const accepted = await put(url.href, BODY);
    expect(accepted.status).toBe(200);
    expect(await stored(key('org-a', 'photo.jpg'))).toBe(true);
  });

  it('a presigned GET reads its object and is a 403 for any other key', async () => {
    await s3.send(new PutObjectCommand({ Bucket: UPLOAD_BUCKET, Key: key('org-a', 'get.txt'), Body: BODY }));
    await s3.send(new PutObjectCommand({ Bucket: UPLOAD_BUCKET, Key: key('org-b', 'get.txt'), Body: BODY }));
    const url = new URL(
      await getSignedUrl(s3, new GetObjectCommand({ Bucket: UPLOAD_BUCKET, Key: key('org-a', 'get.txt') }), {
        expiresIn: 60,
      }),
    );
    const read = await fetch(url);
    expect(read.status).toBe(200);
    expect(Buffer.from(await read.arrayBuffer()).equals(BODY)).toBe(true);
    const other = new URL(url);
    other.pathname = other.pathname.replace(`org-a-${run}`, `org-b-${run}`);
    expect((await fetch(other)).status).toBe(403);
    const overridden = new URL(url);
    overridden.searchParams.set('response-content-type', 'text/html');
    expect((await fetch(overridden)).status).toBe(403);
  });
});
