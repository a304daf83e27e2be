import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { Problem } from '../../shared/http/problems.ts';
import { validate } from '../../shared/http/validate.ts';
import { nonEmptyString, objectId, pageQuery, uuid } from '../../shared/schemas/common.ts';

function problemOf(fn: () => unknown): Problem {
  try {
    fn();
  } catch (error) {
    if (error instanceof Problem) return error;
    throw error;
  }
  throw new Error('expected a problem');
}

describe('validate', () => {
  const body = v.object({
    user: v.object({ email: v.pipe(v.string(), v.email('must be an email address')) }),
    runsheets: v.optional(v.array(v.object({ tasks: v.array(v.object({ id: v.string() })) }))),
  });

  it('names body fields by their dotted path', () => {
    const problem = problemOf(() => validate(body, { user: { email: 'nope' } }, ''));
    expect(problem.status).toBe(400);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors).toEqual([{ path: 'user.email', message: 'must be an email address' }]);
    expect(problem.message).toBe('user.email: must be an email address');
  });

  it('writes array positions with brackets', () => {
    const problem = problemOf(() =>
      validate(body, { user: { email: 'a@b.co' }, runsheets: [{ tasks: [{ id: 'x' }, { id: 7 }] }] }, ''),
    );
    expect(problem.errors[0]?.path).toBe('runsheets[0].tasks[1].id');
  });

  it('says a missing field is required', () => {
    const problem = problemOf(() => validate(body, {}, ''));
    expect(problem.errors).toEqual([{ path: 'user', message: 'is required' }]);
  });

  it('prefixes query parameters and refuses out-of-range pages instead of clamping', () => {
    const query = v.object(pageQuery(20, 100));
    expect(validate(query, {}, 'query')).toEqual({ page: 1, per_page: 20 });
    expect(validate(query, { page: '3', per_page: '100' }, 'query')).toMatchObject({ page: 3, per_page: 100 });
    expect(problemOf(() => validate(query, { per_page: '101' }, 'query')).errors[0]?.path).toBe('query.per_page');
    expect(problemOf(() => validate(query, { page: '0' }, 'query')).errors[0]?.path).toBe('query.page');
    expect(problemOf(() => validate(query, { page: 'abc' }, 'query')).errors[0]?.path).toBe('query.page');
  });

  it('names the whole body when it is not an object', () => {
    expect(problemOf(() => validate(body, 5, '')).errors[0]?.path).toBe('body');
  });

  it('refuses an array where an object is expected, even when every field of the object is optional', () => {
    const update = v.object({
      user: v.object({ name: v.optional(v.string()) }),
      stops: v.optional(v.array(v.object({ note: v.optional(v.string()) }))),
    });
    expect(problemOf(() => validate(update, { user: [] }, '')).errors).toEqual([
      { path: 'user', message: 'must be an object' },
    ]);
    expect(problemOf(() => validate(update, { user: {}, stops: [{}, [1]] }, '')).errors).toEqual([
      { path: 'stops[1]', message: 'must be an object' },
    ]);
    expect(validate(update, { user: {}, stops: [{ note: 'ok' }] }, '')).toEqual({ user: {}, stops: [{ note: 'ok' }] });
  });

  it('refuses control characters in names, and keeps apostrophes, semicolons and the rest of Unicode', () => {
    const named = v.object({ name: nonEmptyString(200) });
    for (const bad of ['\u0000', 'Ann\u001bLee', 'two\nlines', '\u0085', 'evil\u202egnp.exe'])
      expect(problemOf(() => validate(named, { name: bad }, '')).errors).toEqual([
        { path: 'name', message: 'must not contain control characters' },
      ]);
    for (const good of ["O'Brien; Jr.", 'Zoë Ñúñez', '李小龙', "'; DROP TABLE users; --"])
      expect(validate(named, { name: good }, '').name).toBe(good);
  });
});

describe('id bounds', () => {
  const body = v.object({ id: uuid, ref: objectId });
  const ok = { id: '0b6f5a1e-2c3d-4e5f-8a9b-0c1d2e3f4a5b', ref: '0123456789abcdef01234567' };

  it('accepts ids of their exact length', () => {
    expect(() => validate(body, ok, '')).not.toThrow();
  });

  it('answers 400 validation_failed at the path of an over-long id', () => {
    const problem = problemOf(() => validate(body, { ...ok, ref: `${ok.ref}${'a'.repeat(1000)}` }, ''));
    expect(problem.status).toBe(400);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors?.map((e) => e.path)).toContain('ref');
    const long = problemOf(() => validate(body, { ...ok, id: `${ok.id}${'a'.repeat(1000)}` }, ''));
    expect(long.errors?.map((e) => e.path)).toContain('id');
  });
});

describe('I4b reports every problem of a request at once (issue 46.11)', () => {
  it('names a window that ends before it starts together with the field errors', async () => {
    const { createOrgJobBody } = await import('../../shared/imports/schemas.ts');
    const problem = problemOf(() =>
      validate(
        createOrgJobBody,
        {
          files: [],
          start_timezone: 'Europe/Amsterdam',
          start_time: '2026-11-22T10:00:00Z',
          end_timezone: 'Nowhere/Else',
          end_time: '2026-11-22T09:00:00Z',
        },
        '',
      ),
    );
    expect(problem.errors.map((e) => e.path).sort()).toEqual(['end_time', 'end_timezone', 'files', 'service_type']);
    expect(problem.errors).toContainEqual({ path: 'end_time', message: 'must not be before start_time' });
  });
});

describe('validation in time linear in the body, whatever it holds (issue 51.1)', () => {
  it('names the first 100 of 40 000 bad vehicles’ problems, the bound of vehicles[] first, and counts them all', async () => {
    const { createBuildBody } = await import('../../shared/routing/schemas.ts');
    const { problemBody } = await import('../../shared/http/problems.ts');
    const problem = problemOf(() =>
      validate(
        createBuildBody,
        { task_ids: ['0'.repeat(24)], vehicles: Array.from({ length: 40_000 }, () => ({})) },
        '',
      ),
    );
    // The array past its bound is one problem; its first 200 entries are judged (four problems each), and the
    // body's own fields (version_rev) come before the entries' problems.
    expect(problem.errors[0]).toEqual({ path: 'vehicles', message: 'must hold at most 200 entries (it holds 40000)' });
    expect(problem.errors[1]).toEqual({ path: 'version_rev', message: 'is required' });
    expect(problem.errors).toHaveLength(2 + 200 * 4);
    const body = problemBody(problem, 'r1');
    expect(body['errors']).toHaveLength(100);
    expect(body).toMatchObject({ errors_truncated: true, errors_count: 802 });
    expect(problem.message).toMatch(/; and 702 more problems$/);
    expect(problem.message.length).toBeLessThan(10_000);
  });

  it('judges every entry of an array within its bound, with the cross-field checks of each', async () => {
    const { createBuildBody } = await import('../../shared/routing/schemas.ts');
    const vehicle = {
      id: 'v',
      driver_id: '6f1c2d3e-4b5a-4c6d-8e7f-901234567890',
      count: 2,
      start: { latitude: 1, longitude: 2 },
      shift_start_utc: '2026-11-22T10:00:00Z',
      shift_end_utc: '2026-11-22T09:00:00Z',
    };
    const problem = problemOf(() =>
      validate(createBuildBody, { task_ids: ['0'.repeat(24)], vehicles: [vehicle, {}], version_rev: '1-a' }, ''),
    );
    expect(problem.errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      'vehicles[0].count: must be 1 for a vehicle with a driver_id',
      'vehicles[0].shift_end_utc: must be after shift_start_utc',
      'vehicles[1].id: is required',
      'vehicles[1].start: is required',
      'vehicles[1].shift_start_utc: is required',
      'vehicles[1].shift_end_utc: is required',
    ]);
    const { problemBody } = await import('../../shared/http/problems.ts');
    expect(problemBody(problem, 'r1')).not.toHaveProperty('errors_truncated');
  });

  it('answers a number DynamoDB cannot store at its path, and keeps the schema’s own message where it has one (issue 51.5)', async () => {
    const { createBuildBody } = await import('../../shared/routing/schemas.ts');
    const vehicle = (latitude: number, i: number) => ({
      id: `v${i}`,
      start: { latitude, longitude: 0 },
      shift_start_utc: '2026-11-22T09:00:00Z',
      shift_end_utc: '2026-11-22T10:00:00Z',
    });
    const problem = problemOf(() =>
      validate(
        createBuildBody,
        {
          task_ids: ['0'.repeat(24)],
          vehicles: [vehicle(5e-324, 0), vehicle(1e300, 1), vehicle(0, 2)],
          version_rev: '1-a',
        },
        '',
      ),
    );
    expect(problem.errors.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: 'vehicles[0].start.latitude', message: 'must be 0 or between 1e-130 and 9007199254740991 in magnitude' },
      { path: 'vehicles[1].start.latitude', message: 'must be at most 90' },
    ]);
    // A free-form value (push data: a record of anything) is held to the range too; query strings are not numbers.
    const record = v.object({ data: v.optional(v.record(v.string(), v.unknown())) });
    expect(problemOf(() => validate(record, { data: { deep: [1, 1e-200] } }, '')).errors).toEqual([
      { path: 'data.deep[1]', message: 'must be 0 or between 1e-130 and 9007199254740991 in magnitude' },
    ]);
    expect(validate(record, { data: { n: 2 ** 53 - 1 }, unknown_field: 1e-300 }, '')).toEqual({
      data: { n: 2 ** 53 - 1 },
    });
  });
});

describe("T5's body (issue 55 item 4)", () => {
  it('a PUT with scopes alone says it replaces the partner authorization whole, and which fields it needs', async () => {
    const { updatePartnerBody } = await import('../../shared/tokens/schemas.ts');
    const problem = problemOf(() => validate(updatePartnerBody, { scopes: ['imports'] }, ''));
    expect(problem.errors.map((e) => e.path)).toEqual(['name', 'webhook_url']);
    expect(problem.message).toContain('name: is required (T5 is a PUT: it replaces the partner authorization whole;');
    expect(problem.message).toContain('send name and webhook_url');
  });
});
