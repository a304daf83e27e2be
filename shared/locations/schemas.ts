import * as v from 'valibot';
import { dateTime, isoTime, SERVICE_TYPES, uuid } from '#shared/schemas/common';

const isIanaZone = (zone: string) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.includes('/') || zone === 'UTC';
  } catch {
    return false;
  }
};
export const ianaTimezone = v.pipe(
  v.string('must be a string'),
  v.maxLength(64),
  v.check(isIanaZone, 'must be an IANA time zone name'),
);

const latitude = v.pipe(
  v.number('must be a number'),
  v.minValue(-90, 'must be at least -90'),
  v.maxValue(90, 'must be at most 90'),
);
const longitude = v.pipe(
  v.number('must be a number'),
  v.minValue(-180, 'must be at least -180'),
  v.maxValue(180, 'must be at most 180'),
);

export const locationFixBody = v.object({
  device_id: v.optional(v.nullable(v.pipe(v.string('must be a string'), v.maxLength(128)))),
  latitude,
  longitude,
  altitude: v.optional(v.nullable(v.pipe(v.number('must be a number'), v.minValue(-1000), v.maxValue(100_000)))),
  client_time_utc: dateTime,
  client_timezone: v.optional(v.nullable(ianaTimezone)),
});

/** X13's most fixes in one request (contract 4.4). */
export const MAX_FIXES_PER_BATCH = 100;

export const locationFixesBody = v.object({
  fixes: v.pipe(
    v.array(locationFixBody, 'must be an array of fixes'),
    v.minLength(1, 'must hold at least one fix'),
    v.maxLength(MAX_FIXES_PER_BATCH, `must hold at most ${MAX_FIXES_PER_BATCH} fixes`),
  ),
});

/** A number in a query string: digits, a sign, a decimal point and an exponent; then range-checked. */
const queryNumber = (min: number, max: number, minExclusive = false) =>
  v.pipe(
    v.string('is required'),
    v.maxLength(32, 'must be a number'),
    v.regex(/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/, 'must be a number'),
    v.transform(Number),
    v.check(
      (n) => (minExclusive ? n > min : n >= min),
      minExclusive ? `must be greater than ${min}` : `must be at least ${min}`,
    ),
    v.maxValue(max, `must be at most ${max}`),
  );

const searchFilters = {
  max_age_s: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(9, 'must be a whole number of seconds'),
      v.regex(/^\d{1,9}$/, 'must be a whole number of seconds'),
      v.transform(Number),
    ),
    '86400',
  ),
  service_type: v.optional(v.picklist(SERVICE_TYPES, `must be one of ${SERVICE_TYPES.join(', ')}`)),
};

export const nearestQuery = v.object({
  latitude: queryNumber(-90, 90),
  longitude: queryNumber(-180, 180),
  ...searchFilters,
});
export const radiusQuery = v.object({
  latitude: queryNumber(-90, 90),
  longitude: queryNumber(-180, 180),
  radius: queryNumber(0, 50_000, true),
  ...searchFilters,
});
export const driverParams = v.object({ driver_id: uuid });

const locationView = v.object({
  id: v.string(),
  user_id: uuid,
  device_id: v.nullable(v.string()),
  latitude: v.number(),
  longitude: v.number(),
  altitude: v.nullable(v.number()),
  client_time_utc: isoTime,
  client_timezone: v.nullable(v.string()),
  server_time: isoTime,
  version: v.number(),
  age_s: v.number(),
  distance_m: v.optional(v.number()),
});
export const fixReply = v.object({ status: v.literal('ok') });
export const fixesReply = v.object({
  status: v.literal('ok'),
  accepted: v.pipe(v.number(), v.integer(), v.minValue(0)),
  ignored: v.pipe(v.number(), v.integer(), v.minValue(0)),
});
export const locationReply = v.object({ location: locationView });
export const locationsReply = v.object({ locations: v.array(locationView) });
