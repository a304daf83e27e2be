/** A page ends before its answer passes Lambda's limit (shared/db/paging.ts `fittingCount`). */
import { describe, expect, it } from 'vitest';
import { fittingCount, PAGE_ANSWER_BUDGET_BYTES } from '../../shared/db/paging.ts';

describe('fittingCount', () => {
  it('keeps every item of a page that fits', () => {
    expect(fittingCount([{ a: 1 }, { a: 2 }, { a: 3 }])).toBe(3);
    expect(fittingCount([])).toBe(0);
  });

  it('counts each item as the answer carries it: escaped in the body, and again in the result holding the body', () => {
    // 10 quotes: 10 bytes of text, 20 in JSON (\"), 40 in the result (\\\"), plus `{"q":""}` twice escaped, minus one.
    const item = { q: '"'.repeat(10) };
    const size = Buffer.byteLength(JSON.stringify(JSON.stringify(item))) - 1;
    expect(size).toBeGreaterThan(40);
    expect(fittingCount([item, item, item], size * 2)).toBe(2);
    expect(fittingCount([item, item, item], size * 3)).toBe(3);
  });

  it('ends a page of large items before the budget, and always keeps the first item', () => {
    const big = { notes: 'x'.repeat(1_000_000) };
    expect(fittingCount(Array.from({ length: 10 }, () => big))).toBe(5);
    expect(fittingCount([{ notes: 'x'.repeat(PAGE_ANSWER_BUDGET_BYTES + 1) }, big])).toBe(1);
  });

  it('skips items left out of the page (read-through entries whose record is gone)', () => {
    expect(fittingCount([undefined, { a: 1 }, undefined], 10)).toBe(3);
  });
});
