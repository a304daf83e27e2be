/**
 * Page tokens as clients see them (contract section 1): opaque, tamper-proof, and bound to the list, its filters and
 * order, and the caller. The domain's own token (where the next page starts: a DynamoDB key and the page number, see
 * shared/db/paging.ts) is sealed with AES-256-GCM under a key of its own (shared/http/page-token-key.ts: never the signing key);
 * the binding is the additional authenticated data, so it is never carried in the token, only checked. A token that
 * does not open — edited, made by hand, issued for another operation, other path parameters, other filters, order or
 * page size, or for another caller — is a 400 at `query.page_token`, before the domain ever sees it. The handler kit
 * (shared/http/endpoint.ts) opens `query.page_token` and seals `meta.next_page_token` for every operation.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Caller } from '#shared/auth/caller';
import { pageTokenKey } from '#shared/http/page-token-key';
import { invalidField } from '#shared/http/problems';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The contract's `page_token` maxLength (shared/schemas/common.ts); no token the service issues is longer. */
export const MAX_PAGE_TOKEN_LENGTH = 2048;

export const NOT_OURS = 'is not a page token this service issued for this list, its filters and order, and this caller';

/**
 * What a token is bound to: the operation, its path parameters, its query but for `page` and `page_token` (filters,
 * order, range, page size, as validated, defaults included), and the caller's kind, id and organisation.
 */
export function pageTokenBinding(
  operation: string,
  params: Record<string, unknown>,
  query: Record<string, unknown>,
  caller: Caller | null,
): Buffer {
  const { page: _page, page_token: _token, ...filters } = query;
  return Buffer.from(
    JSON.stringify([
      'dispatch page token',
      operation,
      sorted(params),
      sorted(filters),
      caller ? [caller.kind, caller.id, caller.orgId] : null,
    ]),
  );
}

const sorted = (record: Record<string, unknown>) =>
  Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => [key, record[key]]);

/** The domain's token, sealed for the client under `binding`. */
export async function sealPageToken(inner: string, binding: Buffer): Promise<string> {
  const key = await pageTokenKey();
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(binding);
  const sealed = Buffer.concat([Buffer.from([VERSION]), iv, cipher.update(inner, 'utf8'), cipher.final()]);
  const token = Buffer.concat([sealed, cipher.getAuthTag()]).toString('base64url');
  // Keys are bounded (the longest, a user's lower-cased name in A15's GSI5, stays far below): a bug if not.
  if (token.length > MAX_PAGE_TOKEN_LENGTH) throw new Error(`a page token of ${token.length} characters`);
  return token;
}

/** The domain's token inside a client's `page_token`, or a 400 at `query.page_token` when it does not open. */
export async function openPageToken(token: string, binding: Buffer): Promise<string> {
  const bytes = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, 'base64url') : Buffer.alloc(0);
  if (bytes.length < 1 + IV_BYTES + TAG_BYTES || bytes[0] !== VERSION) throw invalidField('query.page_token', NOT_OURS);
  const iv = bytes.subarray(1, 1 + IV_BYTES);
  const body = bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  // Outside the try: a key that cannot be read is the dependency's failure (503), not the token's.
  const key = await pageTokenKey();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES }).setAAD(binding);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    // not sealed under this key and binding
    throw invalidField('query.page_token', NOT_OURS);
  }
}

/** Opens the validated `query.page_token`, when there is one, in place (a 400 when it does not open). */
export async function openQueryPageToken(query: Record<string, unknown>, binding: () => Buffer): Promise<void> {
  const token = query['page_token'];
  // An empty one is no token (the first page), as it always was.
  if (typeof token === 'string' && token !== '') query['page_token'] = await openPageToken(token, binding());
}

/** `body` with its `meta.next_page_token`, when it carries one, sealed under `binding`. */
export async function sealNextPageToken(body: unknown, binding: () => Buffer): Promise<unknown> {
  const meta = (body as { meta?: { next_page_token?: unknown } } | null)?.meta;
  if (!meta || typeof meta.next_page_token !== 'string') return body;
  const next_page_token = await sealPageToken(meta.next_page_token, binding());
  return { ...(body as object), meta: { ...meta, next_page_token } };
}
