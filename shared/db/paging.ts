/**
 * The one pagination helper. Every list is a DynamoDB Query; a page is reached either by the opaque
 * `page_token` (one Query, constant cost) or by `page`. A page number means skipping the earlier pages: lists whose
 * owner keeps a version of the listing (bumped whenever membership or order changes) remember where each page starts
 * ("anchors", stamped with that version), so that page N costs one GetItem and one Query until the list changes;
 * other lists skip by reading keys only.
 */
import { BatchWriteCommand, GetCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { clock, toUtcIso } from '#shared/clock';
import { db, getAll } from '#shared/db/client';
import { type IndexDef, readThroughIndex } from '#shared/db/tables';
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

/**
 * The domain's page token: where the next page starts and its number, as JSON. Clients never see it: the handler kit
 * seals it (encrypted, bound to the list, its filters and order, and the caller; shared/http/page-tokens.ts) and
 * opens theirs before a list runs, so a token reaching the domain is one it issued for this very listing.
 */
export function encodePageToken(key: Key | undefined, page: number): string | null {
  return key ? JSON.stringify({ k: key, p: page }) : null;
}

/** The parts of a domain page token; a 400 at `query.page_token` if it is not one (never a 500). */
export function decodePageToken(token: string): { key: Key; page: number } {
  try {
    const parsed = JSON.parse(token) as { k?: unknown; p?: unknown };
    if (
      parsed &&
      typeof parsed.k === 'object' &&
      parsed.k !== null &&
      typeof parsed.p === 'number' &&
      Number.isInteger(parsed.p) &&
      parsed.p >= 1
    ) {
      return { key: parsed.k as Key, page: parsed.p };
    }
  } catch {
    // fall through to the validation error
  }
  throw invalidField('query.page_token', 'is not a token this service issued');
}

/** A listing's identity and current version, for page anchors; the version must change with membership or order. */
export interface ListingVersion {
  scope: string;
  version: number;
}

type PageQuery = Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey'>;

/**
 * Queries one page of `input` (a key condition on a table or index) and maps each item with `view`; `expand` (when
 * given) completes the page's views before the page is cut to the answer budget (a pair record's runsheet tasks, read
 * once for the page), so the budget counts what the answer carries.
 */
export async function queryPage<T, U = T>(
  input: PageQuery,
  request: PageRequest,
  view: (item: Record<string, unknown>) => T,
  listing?: ListingVersion,
  expand?: (views: T[]) => Promise<U[]>,
): Promise<Page<U>> {
  let startKey: Key | undefined;
  let page = request.page;
  if (request.pageToken) {
    ({ key: startKey, page } = decodePageToken(request.pageToken));
  } else if (request.page > 1) {
    startKey =
      listing && !input.FilterExpression
        ? await anchoredStart(input, request, listing)
        : await skipItems(input, (request.page - 1) * request.perPage);
    if (!startKey) return { items: [], meta: { page, per_page: request.perPage, next_page_token: null } };
  }
  const items: Record<string, unknown>[] = [];
  let cursor = startKey;
  // One item past the page tells whether another page follows, so that a last page that is exactly full carries no
  // token (DynamoDB alone would hand back a key that leads to an empty page). A filter can make DynamoDB return short
  // pages; keep reading until that one more item is in or the range ends.
  do {
    const out = await db().send(
      new QueryCommand({ ...input, Limit: request.perPage + 1 - items.length, ExclusiveStartKey: cursor }),
    );
    items.push(...(out.Items ?? []));
    cursor = out.LastEvaluatedKey;
  } while (cursor && items.length <= request.perPage);
  return finishPage(input, request, page, items, view, expand);
}

/** The page out of `items` read (one more than the page when another follows): views, expansion, answer budget. */
async function finishPage<T, U>(
  input: PageQuery,
  request: PageRequest,
  page: number,
  items: Record<string, unknown>[],
  view: (item: Record<string, unknown>) => T,
  expand?: (views: T[]) => Promise<U[]>,
): Promise<Page<U>> {
  const read = items.slice(0, request.perPage);
  const through = readThroughIndex(input.IndexName);
  const mapped = through ? await viewsThrough(input.TableName!, through, read, view) : read.map(view);
  const views = expand ? await expandedInPlace(mapped, expand) : (mapped as unknown as (U | undefined)[]);
  // A page ends early when its answer would pass Lambda's limit; the token then leads on from the last item shown.
  const fit = fittingCount(views);
  const shown = read.slice(0, fit);
  const more = fit < read.length || items.length > request.perPage;
  const next = more ? lastKeyOf(shown, input) : undefined;
  return {
    items: views.slice(0, fit).filter((v): v is U => v !== undefined),
    meta: { page, per_page: request.perPage, next_page_token: encodePageToken(next, page + 1) },
  };
}

/**
 * A page of a listing spread over several partition keys of the table (a planning's shards: shared/db/shards.ts),
 * `partitions` bound to `:pk` in turn: the listing is their items in that order, each partition's in its sort order.
 * A page token's key names the partition it stopped in; page N without one skips by reading keys only.
 */
export async function queryPartitionsPage<T, U = T>(
  partitions: readonly string[],
  input: PageQuery,
  request: PageRequest,
  view: (item: Record<string, unknown>) => T,
  expand?: (views: T[]) => Promise<U[]>,
): Promise<Page<U>> {
  const at = (index: number): PageQuery => ({
    ...input,
    ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':pk': partitions[index] },
  });
  let start: { index: number; key: Key | undefined } | undefined = { index: 0, key: undefined };
  let page = request.page;
  if (request.pageToken) {
    const token = decodePageToken(request.pageToken);
    page = token.page;
    const index = partitions.indexOf(String(token.key['PK']));
    if (index < 0) throw invalidField('query.page_token', 'is not a token this service issued');
    start = { index, key: token.key };
  } else if (request.page > 1) {
    start = await skipAcross(partitions.length, at, (request.page - 1) * request.perPage);
    if (!start) return { items: [], meta: { page, per_page: request.perPage, next_page_token: null } };
  }
  const items: Record<string, unknown>[] = [];
  let { index, key: cursor } = start;
  while (index < partitions.length && items.length <= request.perPage) {
    const out = await db().send(
      new QueryCommand({ ...at(index), Limit: request.perPage + 1 - items.length, ExclusiveStartKey: cursor }),
    );
    items.push(...(out.Items ?? []));
    cursor = out.LastEvaluatedKey;
    if (!cursor) index++;
  }
  return finishPage(input, request, page, items, view, expand);
}

/**
 * A page of one listing whose entries are spread over several partition keys of an index (a whole-service listing
 * sharded by id, shared/db/shards.ts), `partitions` bound to `:pk`: the entries of all of them in the index's sort
 * order (each shard read from where the last page left it, the reads merged). The page token holds each shard's
 * place; page N without one walks the pages before it (keys only).
 */
export async function queryMergedPage<T>(
  partitions: readonly string[],
  input: PageQuery,
  request: PageRequest,
  view: (item: Record<string, unknown>) => T,
): Promise<Page<T>> {
  const sk = input.IndexName ? `${input.IndexName}SK` : 'SK';
  const descending = input.ScanIndexForward === false;
  const order = (a: Record<string, unknown>, b: Record<string, unknown>) => {
    const [x, y] = [`${String(a[sk])}\u0000${String(a['PK'])}`, `${String(b[sk])}\u0000${String(b['PK'])}`];
    return (x < y ? -1 : x > y ? 1 : 0) * (descending ? -1 : 1);
  };
  /** Each shard's next `count` entries after its place, merged; the places moved past what was taken. */
  const step = async (places: Record<string, Key>, count: number, keysOnly: boolean) => {
    const read = await Promise.all(
      partitions.map(async (pk) => {
        const out = await db().send(
          new QueryCommand({
            ...input,
            ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':pk': pk },
            ...(keysOnly ? { Select: 'SPECIFIC_ATTRIBUTES', ProjectionExpression: keyProjection(input) } : {}),
            Limit: count,
            ExclusiveStartKey: places[pk],
          }),
        );
        return (out.Items ?? []).map((item) => ({ pk, item }));
      }),
    );
    const merged = read.flat().sort((a, b) => order(a.item, b.item));
    const taken = merged.slice(0, count - 1);
    const next = { ...places };
    for (const { pk, item } of taken) next[pk] = lastKeyOf([item], input)!;
    return { taken: taken.map((t) => t.item), next, more: merged.length >= count };
  };
  let places: Record<string, Key> = {};
  let page = request.page;
  if (request.pageToken) {
    const token = decodePageToken(request.pageToken);
    page = token.page;
    places = token.key as Record<string, Key>;
    if (Object.keys(places).some((pk) => !partitions.includes(pk))) {
      throw invalidField('query.page_token', 'is not a token this service issued');
    }
  } else {
    for (let skipped = 1; skipped < request.page; skipped++) {
      const passed = await step(places, request.perPage + 1, true);
      if (!passed.more) return { items: [], meta: { page, per_page: request.perPage, next_page_token: null } };
      places = passed.next;
    }
  }
  const { taken, next, more } = await step(places, request.perPage + 1, false);
  const through = readThroughIndex(input.IndexName);
  const views = through ? await viewsThrough(input.TableName!, through, taken, view) : taken.map(view);
  return {
    items: views.filter((v): v is T => v !== undefined),
    meta: { page, per_page: request.perPage, next_page_token: more ? encodePageToken(next, page + 1) : null },
  };
}

/** Where item number `count` of a listing over partitions ends (keys only); undefined when it has fewer items. */
async function skipAcross(
  partitions: number,
  at: (index: number) => PageQuery,
  count: number,
): Promise<{ index: number; key: Key | undefined } | undefined> {
  let remaining = count;
  for (let index = 0; index < partitions; index++) {
    let cursor: Key | undefined;
    do {
      const input = at(index);
      const out = await db().send(
        new QueryCommand({
          ...input,
          Select: 'SPECIFIC_ATTRIBUTES',
          ProjectionExpression: keyProjection(input),
          Limit: Math.min(remaining, 1000),
          ExclusiveStartKey: cursor,
        }),
      );
      remaining -= out.Items?.length ?? 0;
      cursor = out.LastEvaluatedKey;
      if (remaining === 0) return { index, key: lastKeyOf(out.Items, input) ?? cursor };
    } while (cursor);
  }
  return undefined;
}

/** `expand` over the views that are there, each result put back where its view was (left-out entries stay out). */
async function expandedInPlace<T, U>(views: (T | undefined)[], expand: (views: T[]) => Promise<U[]>) {
  const present = views.flatMap((v, i) => (v === undefined ? [] : [i]));
  const done = await expand(present.map((i) => views[i]!));
  const out: (U | undefined)[] = views.map(() => undefined);
  present.forEach((at, j) => {
    out[at] = done[j];
  });
  return out;
}

/**
 * The bytes a page's items may take in an answer: Lambda refuses a synchronous answer over 6 291 556 bytes, counted
 * over the result object, where the JSON body is a string again (every quote and backslash escaped once more). The
 * rest (headers, `meta`, the list's other members) is far below the margin left.
 */
export const PAGE_ANSWER_BUDGET_BYTES = 5_500_000;

/** The bytes `value` takes in a Lambda result: JSON inside a JSON string, plus a separating comma. */
export const answerBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 1;

/** How many of `views` (in order) fit the answer budget; at least one, so a list always moves on. */
export function fittingCount(views: readonly unknown[], budget = PAGE_ANSWER_BUDGET_BYTES): number {
  let used = 0;
  for (let i = 0; i < views.length; i++) {
    if (views[i] === undefined) continue;
    used += answerBytes(views[i]);
    if (used > budget) return Math.max(i, 1);
  }
  return views.length;
}

/** The views of a page of index entries read through to their records, entry by entry (undefined: left out). */
async function viewsThrough<T>(
  table: string,
  index: IndexDef,
  entries: Record<string, unknown>[],
  view: (item: Record<string, unknown>) => T,
): Promise<(T | undefined)[]> {
  const records = await fromTable(table, index, entries);
  const byId = new Map(records.map((item) => [entryId(item), item]));
  return entries.map((entry) => {
    const item = byId.get(entryId(entry));
    return item ? view(item) : undefined;
  });
}

const entryId = (item: Record<string, unknown>) => `${String(item['PK'])}\u0000${String(item['SK'])}`;

/**
 * The records behind a page of index entries, in the page's order (BatchGetItem). An index entry is written after
 * its record, so a record an eventually consistent read does not find yet is asked for once more, consistently; one
 * that is gone since, or has left this listing since (deleted, moved to another organisation: its index partition
 * is no longer the one read), is left out.
 */
async function fromTable(
  table: string,
  index: IndexDef,
  entries: Record<string, unknown>[],
): Promise<Record<string, unknown>[]> {
  const keyOf = (entry: Record<string, unknown>) => ({ PK: entry['PK'], SK: entry['SK'] });
  const found = new Map((await getAll(table, entries.map(keyOf))).map((item) => [entryId(item), item]));
  const missing = entries.filter((entry) => !found.has(entryId(entry)));
  if (missing.length > 0) {
    for (const item of await getAll(table, missing.map(keyOf), { ConsistentRead: true }))
      found.set(entryId(item), item);
  }
  return entries.flatMap((entry) => {
    const item = found.get(entryId(entry));
    return item && item[index.partitionKey] === entry[index.partitionKey] ? [item] : [];
  });
}

const ANCHOR_TTL_SECONDS = 24 * 3600;

function anchorKey(input: PageQuery, perPage: number, listing: ListingVersion, page: number) {
  const direction = input.ScanIndexForward === false ? 'desc' : 'asc';
  return { PK: `ANCHOR#${listing.scope}#${input.IndexName ?? 'table'}#${direction}#${perPage}`, SK: `P#${page}` };
}

/**
 * Where page `request.page` starts: the stored anchor when it carries the listing's current version; otherwise walk
 * page by page (keys only), store an anchor for every page passed, and return the last.
 */
async function anchoredStart(
  input: PageQuery,
  request: PageRequest,
  listing: ListingVersion,
): Promise<Key | undefined> {
  const table = input.TableName!;
  const stored = await db().send(
    new GetCommand({ TableName: table, Key: anchorKey(input, request.perPage, listing, request.page) }),
  );
  if (stored.Item && stored.Item['v'] === listing.version) return stored.Item['start'] as Key;
  const anchors: Record<string, unknown>[] = [];
  let cursor: Key | undefined;
  for (let page = 2; page <= request.page; page++) {
    const out = await db().send(
      new QueryCommand({
        ...input,
        Select: 'SPECIFIC_ATTRIBUTES',
        ProjectionExpression: keyProjection(input),
        Limit: request.perPage,
        ExclusiveStartKey: cursor,
      }),
    );
    cursor = out.LastEvaluatedKey;
    if (!cursor) break;
    anchors.push({
      ...anchorKey(input, request.perPage, listing, page),
      entity: 'page_anchor',
      v: listing.version,
      start: cursor,
      expires_at: clock.nowEpochSeconds() + ANCHOR_TTL_SECONDS,
    });
  }
  for (let i = 0; i < anchors.length; i += 25) {
    await db().send(
      new BatchWriteCommand({
        RequestItems: { [table]: anchors.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
  }
  return anchors.length === request.page - 1 ? cursor : undefined;
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

/** An inclusive creation-time range over an index whose sort key is `<created_at>#<id>` (N2, N9, I9, P1). */
export interface RangeQuery {
  order: 'asc' | 'desc';
  start?: string | undefined;
  end?: string | undefined;
}

/** The key condition for an inclusive creation-time range on an index sorted by `<created_at>#<id>`. */
export function rangeCondition(index: string, partition: string, range: RangeQuery) {
  const start = range.start ? toUtcIso(range.start) : undefined;
  const end = range.end ? `${toUtcIso(range.end)}#\uffff` : undefined;
  const sk = `${index}SK`;
  const condition =
    start && end ? ` AND #sk BETWEEN :start AND :end` : start ? ' AND #sk >= :start' : end ? ' AND #sk <= :end' : '';
  return {
    KeyConditionExpression: `#pk = :pk${condition}`,
    ExpressionAttributeNames: { '#pk': `${index}PK`, ...(condition ? { '#sk': sk } : {}) },
    ExpressionAttributeValues: {
      ':pk': partition,
      ...(start ? { ':start': start } : {}),
      ...(end ? { ':end': end } : {}),
    },
    ScanIndexForward: range.order === 'asc',
  };
}

export function rangeMeta(range: RangeQuery) {
  return {
    range_start_created_at: range.start ? toUtcIso(range.start) : null,
    range_end_created_at: range.end ? toUtcIso(range.end) : null,
  };
}
