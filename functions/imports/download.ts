// I8 GET /v1/files
import { endpoint } from '#shared/http/endpoint';
import { isSafeObjectKey, UNSAFE_KEY_MESSAGE } from '#shared/imports/object-keys';
import { MAX_BUCKET_NAME, MAX_OBJECT_KEY } from '#shared/imports/schemas';
import { download } from '#shared/imports/uploads';
import { importsRoutes } from '#shared/routes/imports';

// I8 keeps the spec's own failure body, {"Error": "…"}, for its own failures (a 401 is problem+json like everywhere).
const failure = (status: number, message: string) => ({ status, body: { Error: message } });

export const handler = endpoint(importsRoutes, 'I8', async ({ event, caller }) => {
  const bucket = event.queryStringParameters?.['bucket'];
  const key = event.queryStringParameters?.['object_key'];
  if (!bucket) return failure(400, 'bucket is required');
  if (!key) return failure(400, 'object_key is required');
  if (bucket.length > MAX_BUCKET_NAME) return failure(400, `bucket must be at most ${MAX_BUCKET_NAME} characters`);
  if (Buffer.byteLength(key) > MAX_OBJECT_KEY)
    return failure(400, `object_key must be at most ${MAX_OBJECT_KEY} bytes`);
  if (!isSafeObjectKey(key)) return failure(400, `object_key ${UNSAFE_KEY_MESSAGE}`);
  const found = await download(caller, bucket, key);
  if (found.kind === 'missing') return failure(404, 'no such object');
  // A download, never a page: the type the service fixed, as an attachment, not to be sniffed (contract 4.9).
  const headers = { 'Content-Disposition': found.served.contentDisposition, 'X-Content-Type-Options': 'nosniff' };
  if (found.kind === 'redirect') return { status: 302, body: {}, headers: { ...headers, Location: found.location } };
  const raw = { base64: found.body.toString('base64'), contentType: found.served.contentType };
  return { status: 200, body: null, raw, headers };
});
