/**
 * Issue 23.3: the sealing of page tokens (shared/http/page-tokens.ts) on its own. The end-to-end cases, for every
 * list operation, are in test/e2e/page-tokens.test.ts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { newKeySet } from '../../shared/auth/keys.ts';
import { encodePageToken } from '../../shared/db/paging.ts';
import {
  MAX_PAGE_TOKEN_LENGTH,
  openPageToken,
  pageTokenBinding,
  sealNextPageToken,
  sealPageToken,
} from '../../shared/http/page-tokens.ts';
import { Problem } from '../../shared/http/problems.ts';

const ORG = '0f1c7a3e-8d2b-4f6a-9c1e-2b3d4e5f6a7b';
const USER = '5f1c7a3e-8d2b-4f6a-9c1e-2b3d4e5f6a7b';
const caller = { kind: 'user' as const, id: USER, roles: ['OrgAdmin' as const], orgId: ORG };
const query = { page: 1, per_page: 20, order: 'desc', page_token: undefined, range_start_created_at: undefined };
const binding = pageTokenBinding('P1', {}, query, caller);

beforeAll(async () => {
  // Two stored keys, as after a rotation (the first seals).
  const file = join(mkdtempSync(join(tmpdir(), 'keys-')), 'signing-keys.json');
  writeFileSync(file, JSON.stringify({ keys: [...(await newKeySet()).keys, ...(await newKeySet()).keys] }));
  process.env['SIGNING_KEY_FILE'] = file;
});

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(Problem);
  expect((error as Problem).status).toBe(400);
  return (error as Problem & { errors: { path: string }[] }).errors;
}

describe('page tokens', () => {
  it('open to the domain token under the binding they were sealed with, and differ each time', async () => {
    const inner = encodePageToken({ PK: 'PLANNING#x', SK: 'PROFILE' }, 2)!;
    const sealed = await sealPageToken(inner, binding);
    expect(await openPageToken(sealed, binding)).toBe(inner);
    expect(await sealPageToken(inner, binding)).not.toBe(sealed);
    expect(
      await openPageToken(sealed, pageTokenBinding('P1', {}, { ...query, page: 7, page_token: 'x' }, caller)),
    ).toBe(inner);
  });

  it('bind the operation, path parameters, every filter, the page size and the caller', async () => {
    const sealed = await sealPageToken(encodePageToken({ PK: 'x' }, 2)!, binding);
    const others = [
      pageTokenBinding('I2', {}, query, caller),
      pageTokenBinding('P1', { id: 'x' }, query, caller),
      pageTokenBinding('P1', {}, { ...query, order: 'asc' }, caller),
      pageTokenBinding('P1', {}, { ...query, per_page: 21 }, caller),
      pageTokenBinding('P1', {}, { ...query, range_start_created_at: '2026-01-01T00:00:00Z' }, caller),
      pageTokenBinding('P1', {}, query, { ...caller, id: ORG }),
      pageTokenBinding('P1', {}, query, { ...caller, orgId: USER }),
      pageTokenBinding('P1', {}, query, { ...caller, kind: 'client' }),
      pageTokenBinding('P1', {}, query, null),
    ];
    for (const other of others) {
      expect(await refusal(openPageToken(sealed, other))).toEqual([
        { path: 'query.page_token', message: expect.any(String) },
      ]);
    }
  });

  it('refuse any edited byte, and garbage', async () => {
    const sealed = Buffer.from(await sealPageToken(encodePageToken({ PK: 'x' }, 2)!, binding), 'base64url');
    for (let at = 0; at < sealed.length; at++) {
      const copy = Buffer.from(sealed);
      copy[at]! ^= 0x80;
      await refusal(openPageToken(copy.toString('base64url'), binding));
    }
    for (const garbage of ['', '=', 'a b', Buffer.from('{"k":{"PK":"x"},"p":2}').toString('base64url')]) {
      await refusal(openPageToken(garbage, binding));
    }
  });

  it('stay within the documented length for the longest key (A15 by name: 200 characters that lengthen)', async () => {
    const longest = encodePageToken(
      {
        PK: `USER#${USER}`,
        SK: 'PROFILE',
        GSI5PK: `ORG#${ORG}#ROLE#OrgTransporter`,
        GSI5SK: `${'\u0130'.repeat(200).toLowerCase()}#${USER}`,
      },
      1_000_000,
    )!;
    const email = encodePageToken(
      {
        PK: `USER#${USER}`,
        SK: 'PROFILE',
        GSI6PK: `ORG#${ORG}#ROLE#OrgTransporter`,
        GSI6SK: `${'a'.repeat(254)}#${USER}`,
      },
      1_000_000,
    )!;
    for (const inner of [longest, email]) {
      expect((await sealPageToken(inner, binding)).length).toBeLessThanOrEqual(MAX_PAGE_TOKEN_LENGTH);
    }
  });

  it('seal meta.next_page_token of a reply, and leave a last page alone', async () => {
    const reply = { plannings: [], meta: { page: 1, per_page: 20, next_page_token: '{"k":{"PK":"x"},"p":2}' } };
    const sealed = (await sealNextPageToken(reply, () => binding)) as typeof reply;
    expect(sealed.meta.next_page_token).not.toBe(reply.meta.next_page_token);
    expect(await openPageToken(sealed.meta.next_page_token, binding)).toBe(reply.meta.next_page_token);
    const last = { plannings: [], meta: { page: 1, per_page: 20, next_page_token: null } };
    expect(await sealNextPageToken(last, () => binding)).toBe(last);
  });
});
