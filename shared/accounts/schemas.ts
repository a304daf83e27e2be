import * as v from 'valibot';
import { email, nonEmptyString, pageQuery, password, uuid } from '#shared/schemas/common';

export const loginBody = v.object({
  user: v.object({ email, password: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')) }),
});

export const refreshBody = v.object({
  refresh_token: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(512)),
  client_key: v.optional(v.pipe(v.string('must be a string'), v.maxLength(256))),
});

export const logoutBody = v.object({
  refresh_token: v.optional(v.pipe(v.string('must be a string'), v.maxLength(512))),
});

export const ORGANISATION_KINDS = ['merchant', 'transporter', 'platform'] as const;

export const createOrganisationBody = v.object({
  name: nonEmptyString(200),
  kind: v.picklist(ORGANISATION_KINDS, 'must be one of merchant, transporter, platform'),
});

export const organisationParams = v.object({ orgID: uuid });
export const listOrganisationsQuery = v.object(pageQuery(20, 1000));

export { email, password };

// Response shapes: documentation for the OpenAPI document and the contract tests.
const isoTime = v.pipe(v.string(), v.isoTimestamp());

export const userView = v.object({
  id: uuid,
  email: v.string(),
  name: v.string(),
  phone_number: v.nullable(v.number()),
  roles: v.array(v.string()),
  org_id: v.nullable(uuid),
  confirmed_at: v.nullable(isoTime),
  created_at: isoTime,
  updated_at: isoTime,
  driver_profile: v.optional(v.object({ version_rev: v.string(), service_types: v.array(v.string()) })),
});

export const tokenPairResponse = v.object({
  bearer_token: v.string(),
  bearer_token_expired_at: v.number(),
  refresh_token: v.string(),
});

export const loginResponse = v.object({ ...tokenPairResponse.entries, user: userView });

export const organisationView = v.object({
  id: uuid,
  name: v.string(),
  kind: v.picklist(ORGANISATION_KINDS),
  created_at: isoTime,
});

export const pageMeta = v.object({
  page: v.number(),
  per_page: v.number(),
  next_page_token: v.nullable(v.string()),
});

export const organisationList = v.object({ organisations: v.array(organisationView), meta: pageMeta });
export const roleList = v.object({ roles: v.array(v.object({ id: uuid, name: v.string() })) });
export const envelope = v.object({ code: v.literal('success'), message: v.string(), server_time: isoTime });
export const jwks = v.object({ keys: v.array(v.record(v.string(), v.unknown())) });
