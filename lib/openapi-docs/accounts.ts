/** The accounts area's operations as the OpenAPI document explains them (see lib/openapi-docs/index.ts). */
import { EXAMPLE } from '#lib/openapi-docs/examples';
import type { AreaDocs, OperationDocs } from '#lib/openapi-docs/types';

/** A5 and A6 (two roles' routes to the same invitation). */
const INVITE_INTO_OWN: OperationDocs = {
  description: 'Invites a user into the caller’s organisation by email (a mail with an invitation token).',
  example: {
    body: {
      user: {
        email: EXAMPLE.newEmail,
        role_id: EXAMPLE.orgDriverRoleID,
      },
    },
  },
  fields: {
    'body/user/email': 'The address to invite',
    'body/user/role_id': 'The role the invited user gets: a fixed id of X4 (`/v1/roles`)',
  },
};

export const accountsDocs: AreaDocs = {
  X2: {
    description: 'Creates an organisation of a kind (merchant, transporter or platform).',
    example: {
      body: {
        name: 'Lion City Logistics',
        kind: 'transporter',
      },
    },
    fields: {
      'body/name': 'The organisation’s name (1 to 200 characters, one line)',
      'body/kind': 'merchant, transporter or platform',
    },
  },
  X3: {
    description: 'Lists organisations, newest first, one page at a time.',
    example: {
      query: {
        per_page: '20',
      },
    },
  },
  'X3.read': {
    description: 'Reads one organisation.',
    example: {
      params: {
        orgID: EXAMPLE.orgID,
      },
    },
    fields: {
      'params/orgID': 'The organisation’s id',
    },
  },
  X4: {
    description: 'Lists every role with its fixed id (the ids invitations and role changes name).',
  },
  A2: {
    description: 'Registers a freelance driver account, unconfirmed: A3 sends it a security code and X8 confirms it.',
    example: {
      body: {
        user: {
          email: EXAMPLE.newEmail,
          password: EXAMPLE.password,
          name: 'Ada Lovelace',
          phone_number: 6591234567,
        },
      },
    },
    fields: {
      'body/user/email': 'The account’s email address (must not be in use)',
      'body/user/password': 'The account’s password (10 to 1024 characters)',
      'body/user/name': 'The user’s full name (one line)',
      'body/user/phone_number':
        'The user’s phone number, digits only as a number (at most 15 digits, e.g. 6591234567); null clears it',
    },
  },
  X1: {
    description:
      'Registers a merchant: a new merchant organisation and its Merchant user, unconfirmed until A3 and ' + 'X8.',
    example: {
      body: {
        user: {
          email: EXAMPLE.newEmail,
          password: EXAMPLE.password,
          name: 'Ada’s Bakery',
          phone_number: 6591234567,
        },
      },
    },
    fields: {
      'body/user/email': 'The account’s email address (must not be in use)',
      'body/user/password': 'The account’s password (10 to 1024 characters)',
      'body/user/name': 'The user’s full name (one line)',
      'body/user/phone_number':
        'The user’s phone number, digits only as a number (at most 15 digits, e.g. 6591234567); null clears it',
    },
  },
  A3: {
    description:
      'Mails (and texts, with `phone_number`) a 6-digit security code, valid 10 minutes, to an unconfirmed ' +
      'self-registered account; X8 confirms it. A new code replaces the previous one.',
    example: {
      body: {
        user: {
          email: EXAMPLE.unconfirmedEmail,
        },
      },
    },
    fields: {
      'body/user/email': 'The unconfirmed account’s email address (the code is mailed to it)',
      'body/user/phone_number':
        'Optional: when given and the account has a phone number, the code is mailed only if they match',
    },
  },
  X8: {
    description: 'Confirms a self-registered account with the security code A3 sent it.',
    example: {
      body: {
        user: {
          email: EXAMPLE.unconfirmedEmail,
          security_code: EXAMPLE.securityCode,
        },
      },
    },
    errors: {
      410:
        'The security code was already used, replaced by a newer one, voided after 5 wrong tries, or has ' +
        'expired (`gone`)',
    },
    fields: {
      'body/user/email': 'The unconfirmed account’s email address',
      'body/user/security_code': 'The 6-digit code A3 mailed (single use, 10 minutes)',
    },
  },
  A4: {
    description:
      'Accepts an invitation (the token from its mail): sets the name and password and confirms the ' + 'account.',
    example: {
      body: {
        user: {
          name: 'Ada Lovelace',
          password: EXAMPLE.password,
          invitation_token: EXAMPLE.invitationToken,
        },
      },
    },
    errors: {
      410: 'The invitation token was already used, replaced by a newer invitation, or has expired (`gone`)',
    },
    fields: {
      'body/user/name': 'The user’s full name (one line)',
      'body/user/password': 'The new account’s password (10 to 1024 characters)',
      'body/user/invitation_token': 'The token of the invitation mail (single use; a used or expired one is 410)',
    },
  },
  A5: INVITE_INTO_OWN,
  A6: INVITE_INTO_OWN,
  A7: {
    description: 'Invites a user into a named organisation by email, with a role.',
    example: {
      body: {
        user: {
          email: EXAMPLE.newEmail,
          org_id: EXAMPLE.orgID,
          role_id: EXAMPLE.orgDriverRoleID,
        },
      },
    },
    fields: {
      'body/user/email': 'The address to invite',
      'body/user/org_id': 'The organisation the user joins',
      'body/user/role_id': 'The role the invited user gets: a fixed id of X4 (`/v1/roles`)',
    },
  },
  A8: {
    description:
      'Invites up to 500 addresses into a named organisation; each address is reported invited or failed, ' +
      'with why.',
    example: {
      body: {
        user: {
          emails: [EXAMPLE.newEmail, 'not-an-address'],
          org_id: EXAMPLE.orgID,
          role_id: EXAMPLE.orgDriverRoleID,
        },
      },
    },
    fields: {
      'body/user/emails': 'The addresses to invite (1 to 500); each bad one is reported in `failed[]`, not refused',
      'body/user/org_id': 'The organisation the users join',
      'body/user/role_id': 'The role the invited user gets: a fixed id of X4 (`/v1/roles`)',
    },
  },
  A9: {
    description:
      'Invites a driver into the partner’s own organisation by email: a partner hands out no more than it holds, so ' +
      'the invited user is an `OrgDriver` (the default when `role_id` is absent), and any other `role_id` is a 403 ' +
      'that names what the token has and what it may give. Re-inviting a pending address is refused (403) when its ' +
      'pending role is not `OrgDriver`.',
    example: {
      body: {
        user: {
          email: EXAMPLE.newEmail,
          org_id: EXAMPLE.orgID,
          role_id: EXAMPLE.orgDriverRoleID,
        },
      },
    },
    fields: {
      'body/user/email': 'The address to invite',
      'body/user/org_id': 'The partner’s own organisation (any other is 403)',
      'body/user/role_id': '`OrgDriver`’s fixed id (X4, `/v1/roles`), or absent; any other role is a 403',
    },
  },
  A10: {
    description: 'Mails a password reset token to the address if it has an account; the answer is the same either way.',
    example: {
      body: {
        user: {
          email: EXAMPLE.email,
        },
      },
    },
    fields: {
      'body/user/email': 'The address to send the reset mail to (the answer is the same for any address)',
    },
  },
  A11: {
    description: 'Sets a new password with the token of a reset mail (A10); every session of the user ends.',
    example: {
      body: {
        user: {
          password: 'another-good-long-password',
          reset_password_token: EXAMPLE.resetToken,
        },
      },
    },
    errors: {
      410: 'The reset token was already used, replaced by a newer one, or has expired (`gone`)',
    },
    fields: {
      'body/user/password': 'The new password (10 to 1024 characters)',
      'body/user/reset_password_token': 'The token of the reset mail (single use; a used or expired one is 410)',
    },
  },
  A12: {
    description: 'Changes your own name and/or password (a new password needs the current one).',
    example: {
      body: {
        user: {
          name: 'Ada King',
          current_password: EXAMPLE.password,
          password: 'another-good-long-password',
        },
      },
    },
    fields: {
      'body/user/name': 'The caller’s new name',
      'body/user/password': 'The caller’s new password (10 to 1024 characters)',
      'body/user/current_password':
        'The caller’s current password (an addition to the spec’s body): missing or wrong is a 400 ' +
        '`validation_failed` whose `errors[].path` names this member',
    },
  },
  A13: {
    description: 'Changes a user’s name and phone number (OrgAdmin: users of its organisation).',
    example: {
      body: {
        user: {
          id: EXAMPLE.userID,
          name: 'Ada King',
          phone_number: 6598765432,
        },
      },
    },
    fields: {
      'body/user/id': 'The user to change',
      'body/user/name': 'The user’s full name (one line)',
      'body/user/phone_number':
        'The user’s phone number, digits only as a number (at most 15 digits, e.g. 6591234567); null clears it',
    },
  },
  A14: {
    description: 'Lists users, newest first; `org_id` filters by organisation, `search` by email or name prefix.',
    example: {
      query: {
        org_id: EXAMPLE.orgID,
        search: 'ada',
        per_page: '20',
      },
    },
    fields: {
      'query/org_id': 'Only users of this organisation',
      'query/search': 'Only users whose email or name starts with this (1 to 100 characters)',
    },
  },
  A15: {
    description: 'Lists one organisation’s users of one role, sorted.',
    example: {
      query: {
        org_id: EXAMPLE.orgID,
        role_name: 'OrgDriver',
        sort_by: 'name',
        order: 'asc',
      },
    },
    fields: {
      'query/org_id': 'The organisation whose users to list',
      'query/role_name': 'OrgAdmin, OrgDriver or OrgTransporter',
      'query/sort_by': 'name, email or created_at (default)',
    },
  },
  A16: {
    description: 'Reads a user by id, deleted users too.',
    example: {
      params: {
        userID: EXAMPLE.userID,
      },
    },
  },
  A17: {
    description:
      'Deletes a user by email: the stored address gets a deleted prefix, every session ends, and the ' +
      'address may be registered again.',
    example: {
      body: {
        user: {
          email: EXAMPLE.email,
        },
      },
    },
    fields: {
      'body/user/email': 'The email address of the user to delete',
    },
  },
  A18: {
    description: 'Reads a user by email address.',
    example: {
      params: {
        email: EXAMPLE.email,
      },
    },
    fields: {
      'params/email': 'The user’s email address',
    },
  },
  A19: {
    description: 'Lists the users of the caller’s organisation.',
    example: {
      query: {
        per_page: '20',
      },
    },
  },
  A20: {
    description: 'Changes your own name and phone number.',
    example: {
      body: {
        user: {
          name: 'Ada King',
          phone_number: 6598765432,
        },
      },
    },
    fields: {
      'body/user/name': 'The caller’s new name',
      'body/user/phone_number':
        'The user’s phone number, digits only as a number (at most 15 digits, e.g. 6591234567); null clears it',
    },
  },
  A21: {
    description:
      'Changes your driver phone number and service types; `driver_profile.version_rev` must be the ' +
      'current one (X9 shows it), else 409.',
    example: {
      body: {
        user: {
          user: {
            phone_number: 6591234567,
            driver_profile: {
              version_rev: EXAMPLE.profileRev,
              service_types: ['car', 'van_1.7m'],
            },
          },
        },
      },
    },
    fields: {
      'body/user/user': 'The caller’s driver account',
      'body/user/user/phone_number':
        'The user’s phone number, digits only as a number (at most 15 digits, e.g. 6591234567); null clears it',
      'body/user/user/driver_profile': 'The driver profile to change',
      'body/user/user/driver_profile/version_rev':
        'The profile’s current `version_rev` (X9): another one is 409, so no change is lost',
      'body/user/user/driver_profile/service_types':
        'The services the driver offers (at most 10), replacing the earlier list',
    },
  },
  X15: {
    description:
      'Goes on or off duty. Only a driver on duty is offered runsheets by a planning job; a new driver is on duty ' +
      'from the account’s creation. Answers the state and `since`, when that state began: setting the state the ' +
      'driver is already in changes nothing and keeps `since`. Not part of `driver_profile.version_rev`: a toggle ' +
      'never makes a profile edit (A21) stale. X9, A1, A16 and A23 show it as `driver_profile.on_duty` and ' +
      '`driver_profile.on_duty_since`.',
    example: { body: { on_duty: false } },
    fields: {
      'body/on_duty': 'true to go on duty (be offered runsheets), false to go off duty',
    },
  },
  A22: {
    description:
      'Changes your own email address (needs the current password): the new address must be confirmed, the ' +
      'old one is told.',
    example: {
      body: {
        user: {
          user: {
            email: EXAMPLE.newEmail,
            current_password: EXAMPLE.password,
          },
        },
      },
    },
    fields: {
      'body/user/user': 'The caller’s account',
      'body/user/user/email': 'The new email address (confirmed through a mail to it)',
      'body/user/user/current_password':
        'The caller’s current password (an addition to the spec’s body): missing or wrong is a 400 ' +
        '`validation_failed` whose `errors[].path` names this member',
    },
  },
  A23: {
    description: 'Reads a user of your organisation.',
    example: {
      params: {
        userID: EXAMPLE.userID,
      },
    },
  },
  A24: {
    description:
      'Sets your own name and/or password (self-registered merchants; a new password needs the current ' + 'one).',
    example: {
      body: {
        user: {
          name: 'Ada’s Bakery',
        },
      },
    },
    fields: {
      'body/user/name': 'The caller’s new name',
      'body/user/password': 'The caller’s new password (10 to 1024 characters)',
      'body/user/current_password':
        'The caller’s current password (an addition to the spec’s body): missing or wrong is a 400 ' +
        '`validation_failed` whose `errors[].path` names this member',
    },
  },
  A25: {
    description: 'Assigns an organisation to a user that has none (a self-registered account).',
    example: {
      body: {
        user: {
          id: EXAMPLE.unconfirmedUserID,
          org_id: EXAMPLE.orgID,
        },
      },
    },
    fields: {
      'body/user/id': 'The user, who must have no organisation yet',
      'body/user/org_id': 'The organisation to assign',
    },
  },
  A26: {
    description: 'Confirms a user’s account without a security code.',
    example: {
      params: {
        userID: EXAMPLE.unconfirmedUserID,
      },
    },
  },
  X9: {
    description: 'Reads the caller’s own account: profile, organisation and roles.',
  },
};
