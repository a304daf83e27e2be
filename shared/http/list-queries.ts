/** The contract's list parameters (section 1) as the domain's requests: one mapping for every list handler. */
import type { PageRequest, RangeQuery } from '#shared/db/paging';

export const pageOf = (query: { page: number; per_page: number; page_token?: string | undefined }): PageRequest => ({
  page: query.page,
  perPage: query.per_page,
  pageToken: query.page_token,
});

export const rangeOf = (query: {
  order: 'asc' | 'desc';
  range_start_created_at?: string | undefined;
  range_end_created_at?: string | undefined;
}): RangeQuery => ({ order: query.order, start: query.range_start_created_at, end: query.range_end_created_at });
