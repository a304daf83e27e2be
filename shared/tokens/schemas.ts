import * as v from 'valibot';
import { INTERNAL_ROLES, PARTNER_SCOPES } from '#shared/auth/roles';
import { isoTime, nonEmptyString, pageQuery, uuid } from '#shared/schemas/common';

const webhookUrl = v.pipe(v.string('must be a string'), v.trim(), v.maxLength(2048, 'must be at most 2048 characters'));

export const tokenRequestBody = v.object({
  grant_type: v.picklist(
    ['client_credentials', 'authorization_code'],
    'must be client_credentials or authorization_code',
  ),
  code: v.optional(v.pipe(v.string('must be a string'), v.maxLength(256))),
});

/** A partner's scopes (contract section 3): an unknown one is a 400 at its own path (`scopes[1]`). */
const partnerScopes = v.pipe(
  v.array(v.picklist(PARTNER_SCOPES, `must be one of ${PARTNER_SCOPES.join(', ')}`), 'must be an array of scopes'),
  v.maxLength(PARTNER_SCOPES.length * 4, 'must hold at most 16 scopes'),
);

export const createPartnerBody = v.object({
  name: nonEmptyString(200),
  webhook_url: webhookUrl,
  org_id: v.optional(uuid),
  /** Default `["users:invite"]`. */
  scopes: v.optional(partnerScopes),
});
/**
 * T5 is a `PUT` (contract 4.2): a whole replacement of the name and webhook URL, both required (a missing one says so,
 * and why); `scopes` left out keeps the partner's; sent, it replaces them (an empty list grants none).
 */
const WHOLE_REPLACEMENT =
  'is required (T5 is a PUT: it replaces the partner authorization whole; send name and webhook_url, as T6 shows ' +
  'them, and scopes if they change)';
export const updatePartnerBody = v.object(
  {
    name: nonEmptyString(200),
    webhook_url: webhookUrl,
    scopes: v.optional(partnerScopes),
  },
  WHOLE_REPLACEMENT,
);
export const partnerParams = v.object({ partnerAuthorizationID: uuid });
export const clientKeyParams = v.object({ client_key: v.pipe(v.string(), v.minLength(1), v.maxLength(256)) });
export const listPartnersQuery = v.object(pageQuery(200, 1000));
export const listDeliveriesQuery = v.object(pageQuery(50, 1000));

export const createClientBody = v.object({
  name: nonEmptyString(200),
  roles: v.pipe(
    v.array(v.picklist(INTERNAL_ROLES, `must be one of ${INTERNAL_ROLES.join(', ')}`)),
    v.minLength(1, 'must name at least one role'),
    v.maxLength(INTERNAL_ROLES.length, `must hold at most ${INTERNAL_ROLES.length} roles`),
  ),
});
export const clientParams = v.object({ clientID: uuid });

export const createAuthCodeBody = v.object({
  refresh_token: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(512)),
  client_auth: v.object({
    key: v.pipe(v.string('must be a string'), v.minLength(1), v.maxLength(256)),
    name: nonEmptyString(200),
  }),
});
export const authCodeParams = v.object({ auth_code: v.pipe(v.string(), v.minLength(1), v.maxLength(256)) });

export const platformSessionHeaders = v.looseObject({ 'x-platform-id': uuid });
export const platformSessionBody = v.object({
  user: v.object({
    email: v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.maxLength(254, 'must be at most 254 characters'),
      v.email('must be an email address'),
    ),
    password: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(1024)),
  }),
});

// Responses
export const tokenReply = v.object({ bearer_token: v.string(), bearer_token_expired_at: v.number() });
export const exchangeReply = v.object({
  message: v.string(),
  bearer_token: v.string(),
  bearer_token_expired_at: v.number(),
});
const partnerEntries = {
  id: uuid,
  client_key: v.string(),
  name: v.string(),
  webhook_url: v.nullable(v.string()),
  org_id: v.nullable(uuid),
  /** What the partner's token may do beyond T7 and X4 (contract section 3; docs/accounts.md, "Partner scopes"). */
  scopes: v.array(v.picklist(PARTNER_SCOPES)),
  created_at: isoTime,
  updated_at: isoTime,
  updated_by: v.string(),
  /** When the partner was revoked (X7.revoke): a revoked partner is still read and listed, with this member. */
  revoked_at: v.optional(isoTime),
};
export const partnerView = v.object(partnerEntries);
export const createdPartner = v.object({ ...partnerEntries, secret_key: v.string(), webhook_secret: v.string() });
export const partnerList = v.object({
  partner_authorizations: v.array(partnerView),
  meta: v.object({ page: v.number(), per_page: v.number(), next_page_token: v.nullable(v.string()) }),
});
export const partnerBasic = v.object({ client_key: v.string(), name: v.string(), webhook_url: v.nullable(v.string()) });
const clientEntries = {
  id: uuid,
  name: v.string(),
  roles: v.array(v.string()),
  client_key: v.string(),
  created_at: isoTime,
  /** When the client was revoked (X7.revoke): X7's list keeps a revoked client, with this member. */
  revoked_at: v.optional(isoTime),
};
export const createdClient = v.object({ ...clientEntries, secret_key: v.string() });
export const clientList = v.object({ clients: v.array(v.object(clientEntries)) });
export const authCodeReply = v.object({ auth_code: v.string(), server_time: isoTime });
export const authCodeRecord = v.object({
  id: v.string(),
  auth_code: v.string(),
  client_auth: v.object({ key: v.string(), name: v.string() }),
  token: v.nullable(v.string()),
  name: v.string(),
  email: v.string(),
  roles: v.string(),
  org_id: v.nullable(v.string()),
  created_at: isoTime,
  /** Whether the code can still be redeemed (the spec is silent): `active`, `used` or `expired`. */
  status: v.picklist(['active', 'used', 'expired']),
});
export const platformSessionReply = v.object({ session_id: uuid, org_id: uuid });
export const testEventReply = v.object({ event_id: v.string(), server_time: isoTime });
export const deliveryList = v.object({
  deliveries: v.array(
    v.object({
      id: v.string(),
      event_id: v.string(),
      type: v.string(),
      attempt: v.number(),
      status: v.nullable(v.number()),
      latency_ms: v.number(),
      response_excerpt: v.string(),
      attempted_at: isoTime,
      outcome: v.picklist(['delivered', 'retrying', 'failed']),
      next_attempt_at: v.nullable(isoTime),
    }),
  ),
  meta: v.object({ page: v.number(), per_page: v.number(), next_page_token: v.nullable(v.string()) }),
});
