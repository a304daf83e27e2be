/** Descriptions of request fields many operations share (an operation's own `fields` entry wins). */
import type { GenericSchema } from 'valibot';

/** Keyed like OperationDocs.fields. */
export const COMMON_FIELDS: Readonly<Record<string, string>> = {
  'body/user': 'The spec’s `user` object, holding the members below',
  'params/userID': 'The user’s id',
  'params/partnerAuthorizationID': 'The partner authorization’s id (T3’s `id`)',
  'params/notification_id': 'The notification’s id (N2’s `notifications[].id`)',
  'query/page': 'Page number, from 1',
  'query/page_token': 'The previous page’s `meta.next_page_token`, to read the next page',
  'query/order': 'Creation-time order: newest first (desc) or oldest first',
  'query/range_start_created_at': 'Only items created at or after this ISO 8601 date-time (with an offset)',
  'query/range_end_created_at': 'Only items created at or before this ISO 8601 date-time (with an offset)',
  'params/import_job_id': 'The import job’s id (24 hex characters), from I4a, I4b or I3',
  'params/planningID': 'The planning’s id',
  'params/plan_id': 'The broadcast plan’s id: the planning’s id',
  'params/pair_id': 'The runsheet–driver pair’s id',
  'body/happened_at_utc': 'When it happened (ISO 8601 with an offset)',
};

/** The largest `per_page` a page query accepts: its `maxValue` (shared/schemas/common.ts `pageQuery`). */
function maxPerPage(query: GenericSchema): number | undefined {
  const entries = (query as { entries?: Record<string, unknown> }).entries;
  const perPage = entries?.['per_page'] as
    | { wrapped?: { pipe?: { type: string; requirement?: unknown }[] } }
    | undefined;
  const max = perPage?.wrapped?.pipe?.find((action) => action.type === 'max_value')?.requirement;
  return typeof max === 'number' ? max : undefined;
}

/** `per_page`'s description, from the operation's own bounds (its default is in the schema's `default`). */
export function perPageDescription(query: GenericSchema, defaultValue: unknown): string {
  const max = maxPerPage(query);
  return `Items per page, 1 to ${max ?? 'the operation’s maximum'}${defaultValue !== undefined ? ` (default ${defaultValue})` : ''}`;
}
