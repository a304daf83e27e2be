/** The tokens area's operations as the OpenAPI document explains them (see lib/openapi-docs/index.ts). */
import { EXAMPLE } from '#lib/openapi-docs/examples';
import type { AreaDocs } from '#lib/openapi-docs/types';

export const tokensDocs: AreaDocs = {
  T2: {
    description:
      'Exchanges a token of the configured external identity platform (an OIDC JWT in the Authorization ' +
      'header, verified against that issuer’s JWKS) for a service bearer token; its email claim names the ' +
      'account. An unknown account answers 200 with `message` "account not found" and an empty ' +
      'bearer_token.',
  },
  T3: {
    description:
      'Creates a partner authorization: a partner client (client_key, secret_key) and its webhook; the ' +
      'secret_key and webhook_secret are shown only in this answer. The partner acts for `org_id` with the ' +
      '`scopes` granted here: each opens a set of operations, which then answer the partner as they would an ' +
      'OrgAdmin of that organisation (`x-scopes` on each operation; docs/accounts.md, "Partner scopes").',
    example: {
      body: {
        name: 'Acme Couriers',
        webhook_url: 'https://hooks.example.com/dispatch',
        org_id: EXAMPLE.orgID,
        scopes: ['users:invite', 'imports', 'plannings'],
      },
    },
    fields: {
      'body/name': 'The partner’s name',
      'body/webhook_url': 'Where the partner’s webhook events are POSTed',
      'body/org_id': 'The partner’s organisation',
      'body/scopes':
        'What the partner’s token may do: `users:invite` (A9), `imports` (the /v1/task-import-jobs family, I8 of ' +
        'its files, X10, X11), `plannings` (P1–P9, P11, P12, P16, R1, R2, X14, X16–X18), `locations:read` ' +
        '(L2–L4). Default `["users:invite"]`; an unknown scope is a 400 at its path (`scopes[1]`)',
    },
  },
  T4: {
    description: 'Lists partner authorizations, one page at a time (secrets never shown).',
    example: {
      query: {
        per_page: '50',
      },
    },
  },
  T5: {
    description:
      'Replaces a partner authorization’s name, webhook URL and scopes: a PUT, a whole replacement, so name and ' +
      'webhook_url are required every time (as T6 shows them); scopes left out stay as they are. New scopes take ' +
      'effect at the partner’s next token (X5); a scope change ends the tokens issued before it (a 401).',
    example: {
      params: {
        partnerAuthorizationID: EXAMPLE.partnerID,
      },
      body: {
        name: 'Acme Couriers Asia',
        webhook_url: 'https://hooks.example.com/dispatch/v2',
        scopes: ['users:invite', 'imports', 'plannings', 'locations:read'],
      },
    },
    fields: {
      'body/name': 'The partner’s new name',
      'body/webhook_url': 'The new webhook URL (https)',
      'body/scopes': 'The partner’s scopes, replacing the ones it has (left out: unchanged; `[]`: none)',
    },
  },
  T6: {
    description: 'Reads a partner authorization (secrets never shown).',
    example: {
      params: {
        partnerAuthorizationID: EXAMPLE.partnerID,
      },
    },
  },
  'T6.deliveries': {
    description: 'Lists the webhook delivery attempts to a partner, newest first, with their outcome.',
    example: {
      params: {
        partnerAuthorizationID: EXAMPLE.partnerID,
      },
      query: {
        per_page: '20',
      },
    },
  },
  'T6.own-deliveries': {
    description:
      'The calling partner’s own webhook delivery attempts, newest first, with their outcome (the same entries as ' +
      'T6.deliveries shows a SysAdmin). Any partner token may read it, whatever its scopes; only its own deliveries.',
    example: { query: { per_page: '20' } },
  },
  'T6.test': {
    description: 'Sends a signed `webhook.test` event to the partner’s webhook URL; T6.deliveries shows the outcome.',
    example: {
      params: {
        partnerAuthorizationID: EXAMPLE.partnerID,
      },
    },
  },
  T7: {
    description: 'Reads the public view of a partner (name and webhook URL) by its client key.',
    example: {
      params: {
        client_key: EXAMPLE.clientKey,
      },
    },
    fields: {
      'params/client_key': 'The partner’s client key (T3’s `client_key`)',
    },
  },
  T8: {
    description:
      'Creates a single-use auth code, valid 10 minutes, that lets the partner client `client_auth.key` ' +
      'act as you (the partner redeems it with X5 grant_type authorization_code).',
    example: {
      body: {
        refresh_token: EXAMPLE.refreshToken,
        client_auth: {
          key: EXAMPLE.clientKey,
          name: 'Acme Couriers',
        },
      },
    },
    fields: {
      'body/refresh_token': 'The caller’s current refresh token (proves the session; not used up)',
      'body/client_auth': 'The partner client to let act as you',
      'body/client_auth/key': 'The partner’s client key (T3’s `client_key`)',
      'body/client_auth/name': 'The partner’s name, as the caller knows it',
    },
  },
  T9: {
    description: 'Reads an auth code’s record: its client, user and whether it was used.',
    example: {
      params: {
        auth_code: EXAMPLE.authCode,
      },
    },
    fields: {
      'params/auth_code': 'The auth code (T8’s `auth_code`)',
    },
  },
  T10: {
    description:
      'Creates a session for a platform organisation’s user: the platform’s id in the X-Platform-ID ' +
      'header, the user’s email and password in the body.',
    example: {
      headers: { 'x-platform-id': EXAMPLE.platformID },
      body: {
        user: {
          email: EXAMPLE.platformEmail,
          password: EXAMPLE.password,
        },
      },
    },
    fields: {
      'headers/x-platform-id': 'The platform organisation’s id',
      'body/user/email': 'The account’s email address',
      'body/user/password': 'The account’s password',
    },
  },
  X5: {
    description:
      'Issues a client bearer token. Authenticate with HTTP Basic `client_key:secret_key`; grant_type ' +
      'client_credentials acts as the client, authorization_code (with `code` from T8) as the user who ' +
      'made the code.',
    example: {
      body: {
        grant_type: 'client_credentials',
      },
    },
    errors: {
      410:
        'grant_type authorization_code: the auth code was already used, has expired, or its user is gone ' + '(`gone`)',
      429:
        'Too many requests (`rate_limited`, with `Retry-After`): over 60 requests a minute from one source address, ' +
        'or over 30 tokens a minute for one client; or API Gateway’s route throttle',
    },
    fields: {
      'body/grant_type': 'client_credentials: act as the client; authorization_code: act as the user of `code`',
      'body/code': 'The auth code from T8 (authorization_code)',
    },
  },
  X7: {
    description: 'Creates an internal worker client with internal roles; its secret_key is shown only in this answer.',
    example: {
      body: {
        name: 'Import worker',
        roles: ['ImportWorker'],
      },
    },
    fields: {
      'body/name': 'The client’s name (1 to 200 characters)',
      'body/roles': 'The internal roles the client gets (ImportWorker, PlanningWorker …)',
    },
  },
  'X7.list': {
    description:
      'Lists the internal worker clients with their roles (secrets never shown). A revoked client stays listed, with `revoked_at`.',
  },
  'X7.revoke': {
    description: 'Revokes a client (internal or partner): its credentials and the tokens issued to it stop working.',
    example: {
      params: {
        clientID: EXAMPLE.clientID,
      },
    },
    fields: {
      'params/clientID': 'The client’s id (X7’s `id`, or a partner’s client id)',
    },
  },
};
