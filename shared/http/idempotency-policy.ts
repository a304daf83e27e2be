/**
 * How an `Idempotency-Key` is scoped and compared, per operation (docs/idempotency.md). A replay never answers for a
 * credential it was not given: a public operation's key is scoped by a hash of every credential the request presents
 * (the `Authorization` and `X-Platform-ID` headers and the secrets of its body), and the operations whose answer IS a
 * credential store nothing at all (every request is judged on its own, as if it had no key). Bodies are compared as
 * JSON: the same members in another order or with other whitespace are the same body.
 */
import { createHash } from 'node:crypto';
import type { Caller } from '#shared/auth/caller';
import type { RouteDef } from '#shared/routes/types';

/**
 * Public operations whose reply is a credential: A1 and T10 (a session for a password), T1 (a new pair for a refresh
 * token, which must meet reuse detection on every call), T2 (tokens for an external token) and X5 (a bearer token for
 * client credentials). Their replies are never stored.
 */
export const CREDENTIAL_ISSUERS: ReadonlySet<string> = new Set(['A1', 'T1', 'T2', 'T10', 'X5']);

/** Members of a body (at its top level or under `user`) that are credentials. */
const BODY_SECRETS = [
  'password',
  'refresh_token',
  'invitation_token',
  'reset_password_token',
  'security_code',
  'code',
  'client_secret',
] as const;

/** Headers that are credentials. */
const HEADER_SECRETS = ['authorization', 'x-platform-id'] as const;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** True when the operation's replies may be stored under an Idempotency-Key. */
export const storesReplies = (route: RouteDef): boolean => !CREDENTIAL_ISSUERS.has(route.id);

/**
 * The scope of a key: the operation and the caller; for a public operation (no caller) a hash of the credentials the
 * request presents, so a request without them, or with others, is never a replay of one that had them.
 */
export function idempotencyScope(
  route: RouteDef,
  caller: Caller | null,
  headers: Record<string, string | undefined>,
  body: unknown,
): string {
  if (caller) return `${route.id}#${caller.id}`;
  const presented: (string | null)[] = HEADER_SECRETS.map((name) => headers[name] ?? null);
  for (const holder of [body, (body as { user?: unknown } | undefined)?.user]) {
    for (const name of BODY_SECRETS) {
      const value = holder && typeof holder === 'object' ? (holder as Record<string, unknown>)[name] : undefined;
      presented.push(value === undefined ? null : JSON.stringify(value));
    }
  }
  return `${route.id}#public#${sha256(JSON.stringify(presented))}`;
}

/** The same JSON value whatever the member order and whitespace: members sorted, no spaces. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a repeat must match: the parsed body as canonical JSON when there is one, else the raw text. */
export const payloadHash = (parsed: unknown, raw: string): string =>
  sha256(parsed === undefined ? `raw:${raw}` : `json:${canonicalJson(parsed)}`);

/** The seed of the ids a create draws (shared/ids.ts): the same scope, key and body give the same ids. */
export const idSeed = (scope: string, key: string, payload: string): string => sha256(`${scope}\n${key}\n${payload}`);
