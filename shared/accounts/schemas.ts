import * as v from 'valibot';
import {
  email,
  forwardTo,
  isoTime,
  nonEmptyString,
  order,
  pageQuery,
  password,
  SERVICE_TYPES,
  uuid,
} from '#shared/schemas/common';

export { SERVICE_TYPES };

export const loginBody = v.object({
  user: v.object({
    email,
    password: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(1024)),
  }),
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

/** Phone numbers are integers in account payloads (the spec's type), at most 15 digits (E.164). */
export const phoneNumber = v.pipe(
  v.number('must be a number'),
  v.integer('must be a whole number'),
  v.minValue(0, 'must not be negative'),
  v.maxValue(999_999_999_999_999, 'must have at most 15 digits'),
);
const name = nonEmptyString(200);
const roleId = uuid;

export const registerBody = v.object({
  user: v.object({ email, password, name, phone_number: v.optional(v.nullable(phoneNumber)) }),
});

export const securityCodeBody = v.object({
  user: v.object({
    email,
    phone_number: v.optional(v.nullable(v.pipe(v.string('must be a string'), v.maxLength(32)))),
  }),
});

export const verifySecurityCodeBody = v.object({
  user: v.object({
    email,
    security_code: v.pipe(
      v.string('must be a string'),
      v.maxLength(6, 'must be 6 digits'),
      v.regex(/^\d{6}$/, 'must be 6 digits'),
    ),
  }),
});

export const acceptInvitationBody = v.object({
  user: v.object({
    name,
    password,
    invitation_token: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(256)),
  }),
});

/** A5, A6: into the caller's own organisation; `role_id` optional (OrgDriver). */
export const inviteOwnOrgBody = v.object({ user: v.object({ email, role_id: v.optional(roleId) }) });
/** A7: into a named organisation; `role_id` optional (OrgAdmin). */
export const inviteNamedOrgBody = v.object({ user: v.object({ email, org_id: uuid, role_id: v.optional(roleId) }) });
/** A9: a partner into its own organisation. */
export const invitePartnerBody = v.object({ user: v.object({ email, org_id: uuid, role_id: v.optional(roleId) }) });

export const MAX_BULK_INVITATIONS = 500;
export const bulkInviteBody = v.object({
  user: v.object({
    // Each address is checked one by one so that a bad one lands in `failed[]` instead of failing the request.
    emails: v.pipe(
      v.array(
        v.pipe(v.string('must be a string'), v.maxLength(254, 'must be at most 254 characters')),
        'must be an array of email addresses',
      ),
      v.minLength(1, 'must not be empty'),
      v.maxLength(MAX_BULK_INVITATIONS, `must hold at most ${MAX_BULK_INVITATIONS} addresses`),
    ),
    org_id: uuid,
    role_id: v.optional(roleId),
  }),
});

export const forgotPasswordBody = v.object({ user: v.object({ email }) });
export const resetPasswordBody = v.object({
  user: v.object({
    password,
    reset_password_token: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(256)),
  }),
});

/** The current password, where a change needs it (A12 and A24 for a new password, A22 always). */
const currentPassword = v.pipe(
  v.string('must be a string'),
  v.maxLength(1024),
  v.description(
    'The caller’s current password (an addition to the spec’s body): missing or wrong is a 400 `validation_failed` ' +
      'whose `errors[].path` names this member',
  ),
);

/** A body `user` that may change the name and the password; a new password needs the current one. */
const nameAndPassword = (nothing: string) =>
  v.pipe(
    v.object({
      name: v.optional(name),
      current_password: v.optional(currentPassword),
      password: v.optional(password),
    }),
    v.check((u) => u.name !== undefined || u.password !== undefined, nothing),
    forwardTo(
      v.check(
        (u) => u.password === undefined || u.current_password !== undefined,
        'is required to change the password',
      ),
      ['current_password'],
    ),
  );

export const updateOwnAccountBody = v.object({ user: nameAndPassword('must change the name or the password') });

export const updateProfileBody = v.object({
  user: v.object({ id: uuid, name: v.optional(name), phone_number: v.optional(v.nullable(phoneNumber)) }),
});

export const updateSelfBody = v.object({
  user: v.object({ name: v.optional(name), phone_number: v.optional(v.nullable(phoneNumber)) }),
});

export const updateDriverBody = v.object({
  user: v.object({
    user: v.object({
      phone_number: v.optional(v.nullable(phoneNumber)),
      driver_profile: v.object({
        version_rev: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(64)),
        service_types: v.optional(
          v.pipe(v.array(v.picklist(SERVICE_TYPES, `must be one of ${SERVICE_TYPES.join(', ')}`)), v.maxLength(10)),
        ),
      }),
    }),
  }),
});

/** X15. */
export const dutyBody = v.object({ on_duty: v.boolean('must be true or false') });

/** The spec's `user{user{email}}`, and the current password (an addition: an address is a credential). */
export const updateTransporterEmailBody = v.object({
  user: v.object({ user: v.object({ email, current_password: currentPassword }) }),
});

/** The spec's `user{name, password}`, and the current password when the password changes (an addition). */
export const updateMerchantBody = v.object({ user: nameAndPassword('must set the name or the password') });

export const deleteUserBody = v.object({ user: v.object({ email }) });
export const assignOrganisationBody = v.object({ user: v.object({ id: uuid, org_id: uuid }) });

export const userParams = v.object({ userID: uuid });
export const emailParams = v.object({ email });

const searchTerm = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(100));

export const listUsersQuery = v.object({
  ...pageQuery(20, 100),
  org_id: v.optional(uuid),
  search: v.optional(searchTerm),
});
export const listOrgUsersQuery = v.object(pageQuery(20, 100));

export const USER_LIST_ROLES = ['OrgAdmin', 'OrgDriver', 'OrgTransporter'] as const;
export const listUsersByRoleQuery = v.object({
  ...pageQuery(50, 100),
  org_id: uuid,
  role_name: v.picklist(USER_LIST_ROLES, 'must be OrgAdmin, OrgDriver or OrgTransporter'),
  sort_by: v.optional(v.picklist(['name', 'email', 'created_at'], 'must be name, email or created_at'), 'created_at'),
  order,
});

// Response shapes: documentation for the OpenAPI document and the contract tests.

/** A driver's profile wherever a user is shown (A1, A16, A21, A23, X9): closed, with the duty state of X15. */
const driverProfileView = v.object({
  version_rev: v.string(),
  service_types: v.array(v.string()),
  on_duty: v.pipe(v.boolean(), v.description('Whether the driver is on duty (X15); a new driver is')),
  on_duty_since: v.pipe(
    isoTime,
    v.description('When the current duty state began: the last change, or the account’s creation if never changed'),
  ),
});

/** X15's reply: the duty state and when it began (the account's creation until the driver first changes it). */
export const dutyReply = v.object({ on_duty: v.boolean(), since: isoTime });

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
  deleted_at: v.optional(isoTime),
  driver_profile: v.optional(driverProfileView),
});

export const tokenPairResponse = v.object({
  bearer_token: v.string(),
  bearer_token_expired_at: v.number(),
  refresh_token: v.string(),
});

export const loginResponse = v.object({ ...tokenPairResponse.entries, user: userView });

/**
 * A password change (A12, A24) ends every session, the caller's too: its reply carries the caller's new one. The
 * members are absent when the password did not change.
 */
const newSession = {
  bearer_token: v.optional(
    v.pipe(
      v.string(),
      v.description('After a password change: the caller’s new bearer token (every earlier token stops working)'),
    ),
  ),
  bearer_token_expired_at: v.optional(v.number()),
  refresh_token: v.optional(v.string()),
};
export const ownAccountReply = v.object({ message: v.string(), ...newSession });

export const statusReply = v.object({ status: v.string() });

const listedUser = v.object({
  id: uuid,
  email: v.string(),
  name: v.string(),
  created_at: isoTime,
  updated_at: isoTime,
  org_id: v.nullable(uuid),
  roles: v.array(v.string()),
  /** A driver's duty state and service types (the dispatcher's console shows them without a read per driver). */
  driver_profile: v.optional(driverProfileView),
});
const listMeta = v.object({
  page: v.number(),
  per_page: v.number(),
  total: v.number(),
  next_page_token: v.nullable(v.string()),
});
export const userList = v.object({ users: v.array(listedUser), meta: listMeta });
export const userListByRole = v.object({
  users: v.array(
    v.object({
      ...v.omit(listedUser, ['roles']).entries,
      roles_name: v.array(v.string()),
      confirmed_at: v.nullable(isoTime),
      invitation_token: v.null(),
      invitation_status: v.nullable(v.picklist(['pending'])),
    }),
  ),
  meta: v.object({
    ...listMeta.entries,
    total_records: v.number(),
    total_pages: v.number(),
    has_next: v.boolean(),
    has_previous: v.boolean(),
  }),
});
export const bulkInviteReply = v.object({
  invited: v.array(v.string()),
  failed: v.array(v.string()),
  failures: v.array(v.object({ email: v.string(), reason: v.string() })),
});
export const meReply = v.object({ user: userView });
/** A23: what an organisation's admin sees of a member. */
export const orgUserReply = v.object({
  user: v.object({
    id: uuid,
    email: v.string(),
    name: v.string(),
    roles: v.array(v.string()),
    org_id: v.nullable(uuid),
    driver_profile: v.optional(driverProfileView),
  }),
});
export const driverUpdateReply = v.object({
  ...envelopeEntries(),
  driver_profile: driverProfileView,
});

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
function envelopeEntries() {
  return { code: v.literal('success'), message: v.string(), server_time: isoTime };
}
export const envelope = v.object(envelopeEntries());
export const merchantUpdateReply = v.object({ ...envelopeEntries(), ...newSession });
/** A2 and X1: the new user's id (X1 also the new organisation's), so a client can follow up without a login. */
export const driverRegistered = v.object({ message: v.string(), user_id: uuid });
export const merchantRegistered = v.object({ message: v.string(), user_id: uuid, org_id: uuid });
/** Each key is a JWK (RFC 7517): open by design, its members depend on the key type and may grow. */
export const jwks = v.object({ keys: v.array(v.record(v.string(), v.unknown())) });
