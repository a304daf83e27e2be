/**
 * The one pagination helper. Every list is a DynamoDB Query; a page is reached either by the opaque
 * `page_token` (one Query, constant cost) or by `page` (keys-only Queries that skip the earlier pages, then one Query).
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db } from '#shared/db/client';
import { invalidField } from '#shared/http/problems';

export interface PageRequest {
  page: number;
  perPage: number;
  pageToken?: string;
}

export interface Page<T> {
  items: T[];
  meta: { page: number; per_page: number; next_page_token: string | null };
}

type Key = Record<string, unknown>;

export function encodePageToken(key: Key | undefined, page: number): string | null {
  return key ? Buffer.from(JSON.stringify({ k: key, p: page })).toString('base64url') : null;
}

function decodePageToken(token: string): { key: Key; page: number } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { k?: unknown; p?: unknown };
    if (parsed && typeof parsed.k === 'object' && parsed.k !== null && typeof parsed.p === 'number') {
      return { key: parsed.k as Key, page: parsed.p };
    }
  } catch {
    // fall through to the validation error
  }
  throw invalidField('query.page_token', 'is not a token this service issued');
}

/** Queries one page of `input` (a key condition on a table or index) and maps each item with `view`. */
export async function queryPage<T>(
  input: Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey'>,
  request: PageRequest,
  view: (item: Record<string, unknown>) => T,
): Promise<Page<T>> {
  let startKey: Key | undefined;
  let page = request.page;
  if (request.pageToken) {
    ({ key: startKey, page } = decodePageToken(request.pageToken));
  } else if (request.page > 1) {
    startKey = await skipItems(input, (request.page - 1) * request.perPage);
    if (!startKey) return { items: [], meta: { page, per_page: request.perPage, next_page_token: null } };
  }
  const items: Record<string, unknown>[] = [];
  let cursor = startKey;
  // A filter can make DynamoDB return short pages; keep reading until the page is full or the range ends.
  do {
    const out = await db().send(
      new QueryCommand({ ...input, Limit: request.perPage - items.length, ExclusiveStartKey: cursor }),
    );
    items.push(...(out.Items ?? []));
    cursor = out.LastEvaluatedKey;
  } while (cursor && items.length < request.perPage);
  return {
    items: items.map(view),
    meta: { page, per_page: request.perPage, next_page_token: encodePageToken(cursor, page + 1) },
  };
}

/** Reads only keys to find where item number `count` ends; undefined when the range has fewer items. */
async function skipItems(input: Omit<QueryCommandInput, 'Limit'>, count: number): Promise<Key | undefined> {
  let remaining = count;
  let cursor: Key | undefined;
  while (remaining > 0) {
    const out = await db().send(
      new QueryCommand({
        ...input,
        Select: input.FilterExpression ? undefined : 'SPECIFIC_ATTRIBUTES',
        ProjectionExpression: input.FilterExpression ? input.ProjectionExpression : keyProjection(input),
        Limit: Math.min(remaining, 1000),
        ExclusiveStartKey: cursor,
      }),
    );
    remaining -= out.Items?.length ?? 0;
    cursor = out.LastEvaluatedKey;
    if (!cursor) return remaining > 0 ? undefined : lastKeyOf(out.Items, input);
  }
  return cursor;
}

function keyProjection(input: Omit<QueryCommandInput, 'Limit'>): string {
  return input.IndexName ? `PK, SK, ${input.IndexName}PK, ${input.IndexName}SK` : 'PK, SK';
}

function lastKeyOf(items: Record<string, unknown>[] | undefined, input: Omit<QueryCommandInput, 'Limit'>) {
  const last = items?.at(-1);
  if (!last) return undefined;
  const names = keyProjection(input).split(', ');
  return Object.fromEntries(names.filter((name) => name in last).map((name) => [name, last[name]]));
}
