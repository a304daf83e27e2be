import * as v from 'valibot';

/** Building blocks shared by the request schemas of every area. */

/**
 * valibot's `forward`, in time linear in the problems: `forward` copies the problem list before its check and
 * searches the copy for every problem after it (quadratic: 160 000 problems of 40 000 vehicles took 18 s, issue 51.1).
 * A check only appends problems, so those past the count before it are its own.
 */
export const forwardTo = ((action, path) => {
  const forwarded = v.forward(action, path);
  return {
    ...forwarded,
    '~run'(dataset, config) {
      const before = dataset.issues?.length ?? 0;
      const after = action['~run'](dataset, config);
      const issues = after.issues ?? [];
      for (let i = before; i < issues.length; i++) {
        const issue = issues[i]!;
        let input: unknown = after.value;
        for (const key of path as readonly (string | number)[]) {
          const value = (input as Record<string | number, unknown>)[key];
          const item = { type: 'unknown', origin: 'value', input, key, value } as const;
          if (issue.path) issue.path.push(item as never);
          else (issue as { path: unknown[] }).path = [item];
          if (!value) break;
          input = value;
        }
      }
      return after;
    },
  };
}) as typeof v.forward;

/**
 * The spec's `service_type` values (a driver's `driver_profile.service_types`, an import job's, a runsheet's). Here,
 * not in the accounts area's schemas, so that a planning, locations or imports bundle does not carry those (valibot's
 * top-level calls are not tree-shaken).
 */
export const SERVICE_TYPES = [
  'ltl',
  'motorcycle',
  'car',
  'mpv',
  'van_1.7m',
  'van_2.4m',
  'lorry_10ft',
  'lorry_14ft',
  'lorry_24ft',
  'lorry_40ft',
] as const;
export const uuid = v.pipe(v.string(), v.uuid('must be a UUID'), v.maxLength(36, 'must be a UUID'));
export const objectId = v.pipe(
  v.string(),
  v.regex(/^[0-9a-f]{24}$/, 'must be a 24-character lowercase hex id'),
  v.maxLength(24, 'must be a 24-character lowercase hex id'),
);

export const email = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(254, 'must be at most 254 characters'),
  v.email('must be an email address'),
);

export const password = v.pipe(
  v.string('must be a string'),
  v.minLength(10, 'must be at least 10 characters'),
  v.maxLength(1024, 'must be at most 1024 characters'),
);

/**
 * C0 and C1 control characters (NUL, escape, line breaks, …) and the bidirectional embedding, override and isolate
 * controls (which make a name display as something else): never part of a name or a single-line label.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
export const singleLine = v.check<string, string>(
  (s) => !CONTROL_CHARACTERS.test(s),
  'must not contain control characters',
);

/** A trimmed, non-empty, single-line string: names and labels. */
export const nonEmptyString = (max = 200) =>
  v.pipe(
    v.string('must be a string'),
    v.trim(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(max, `must be at most ${max} characters`),
    singleLine,
  );

/** Any ISO 8601 date-time with an offset; normalised by the domain with `toUtcIso`. */
export const dateTime = v.pipe(
  v.string('must be a string'),
  v.maxLength(40, 'must be at most 40 characters'),
  v.isoTimestamp('must be an ISO 8601 date-time with an offset'),
  v.check((s) => !Number.isNaN(Date.parse(s)), 'must be a valid date-time'),
);

/** A query-string integer: digits only, then range-checked. Out of range is a 400, never a silent clamp. */
const queryInt = (min: number, max: number, what: string) =>
  v.pipe(
    v.string(),
    v.maxLength(9, `must be a whole number from ${min} to ${max}`),
    v.regex(/^\d{1,9}$/, `must be a whole number from ${min} to ${max}`),
    v.transform(Number),
    v.minValue(min, `${what} must be at least ${min}`),
    v.maxValue(max, `${what} must be at most ${max}`),
  );

/** `page`, `per_page` and `page_token` of contract section 1, with the operation's default and maximum page size. */
export function pageQuery(defaultPerPage: number, maxPerPage: number) {
  return {
    page: v.optional(queryInt(1, 1_000_000, 'page'), '1'),
    per_page: v.optional(queryInt(1, maxPerPage, 'per_page'), String(defaultPerPage)),
    page_token: v.optional(v.pipe(v.string(), v.maxLength(2048, 'must be at most 2048 characters'))),
  };
}

export const order = v.optional(v.picklist(['asc', 'desc'], 'must be asc or desc'), 'desc');

/** An inclusive creation-time range must not start after it ends (a 400 at `range_start_created_at`). */
export const orderedRange = (q: {
  range_start_created_at?: string | undefined;
  range_end_created_at?: string | undefined;
}) =>
  !q.range_start_created_at ||
  !q.range_end_created_at ||
  Date.parse(q.range_start_created_at) <= Date.parse(q.range_end_created_at);
export const RANGE_AFTER_END = 'must not be after range_end_created_at';

/**
 * The query of a list over an inclusive creation-time range (N2, N9, I9 lists, P1): `page`, `per_page` (200, at most
 * 1 000), `page_token`, `order`, `range_start_created_at`, `range_end_created_at`, plus the operation's own `extra`
 * fields. A start after the end is a 400 at `query.range_start_created_at`.
 */
export function rangedListQuery<Extra extends v.ObjectEntries>(extra: Extra) {
  const object = v.object({
    ...pageQuery(200, 1000),
    order,
    range_start_created_at: v.optional(dateTime),
    range_end_created_at: v.optional(dateTime),
    ...extra,
  });
  return v.pipe(
    object,
    // The field is always there whatever `extra` holds; TypeScript cannot see that through the generic.
    forwardTo(v.check<v.InferOutput<typeof object>, string>(orderedRange, RANGE_AFTER_END), [
      'range_start_created_at',
    ] as never),
  );
}

/** The keys of a free-form object (push data, import results): short labels. */
export const recordKey = v.pipe(v.string(), v.maxLength(100, 'keys must be at most 100 characters'));

/** A count a worker reports (import and planning job results). */
export const counter = v.pipe(
  v.number('must be a number'),
  v.integer('must be a whole number'),
  v.minValue(0, 'must not be negative'),
  v.maxValue(1_000_000_000, 'must be at most 1000000000'),
);

/* Response building blocks (they document replies in the OpenAPI document; requests never use them). */

/** A date-time the service writes (always UTC ISO 8601). */
export const isoTime = v.pipe(v.string(), v.isoTimestamp());

/** `meta` of a list filtered by creation time and paged (N2, N9, P1). */
export const rangePageMeta = v.object({
  range_start_created_at: v.nullable(isoTime),
  range_end_created_at: v.nullable(isoTime),
  page: v.number(),
  per_page: v.number(),
  next_page_token: v.nullable(v.string()),
});

/** `{message}` replies (deletions, recorded events). */
export const messageReply = v.object({ message: v.string() });
