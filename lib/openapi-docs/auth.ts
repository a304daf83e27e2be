/** The auth area's operations as the OpenAPI document explains them (see lib/openapi-docs/index.ts). */
import { EXAMPLE } from '#lib/openapi-docs/examples';
import type { AreaDocs } from '#lib/openapi-docs/types';

export const authDocs: AreaDocs = {
  JWKS: {
    description:
      'The public keys (JWK Set, ES256) that verify the service’s bearer tokens; any verifier can fetch ' +
      'and cache them.',
  },
  A1: {
    description: 'Logs in with email and password; answers a bearer token (JWT), a refresh token and the user.',
    example: {
      body: {
        user: {
          email: EXAMPLE.email,
          password: EXAMPLE.password,
        },
      },
    },
    fields: {
      'body/user/email': 'The account’s email address',
      'body/user/password': 'The account’s password',
    },
  },
  T1: {
    description:
      'Exchanges a refresh token for a new bearer token and a new refresh token; the old one stops ' +
      'working, and presenting it again ends its whole family (reuse detection).',
    example: {
      body: {
        refresh_token: EXAMPLE.refreshToken,
      },
    },
    fields: {
      'body/refresh_token': 'The refresh token of the last login or refresh (single use)',
      'body/client_key': 'A partner client’s key',
    },
  },
  X6: {
    description: 'Ends the session of a refresh token, or without one every session of the caller.',
    example: {
      body: {
        refresh_token: EXAMPLE.refreshToken,
      },
    },
    fields: {
      'body/refresh_token': 'The session to end; without it every session of the caller ends',
    },
  },
};
