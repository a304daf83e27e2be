/** The auth area's operations (one entry each; see shared/routes.ts for the whole table). */
import * as accounts from '#shared/accounts/schemas';
import type { RouteDef } from '#shared/routes/types';

export const authRoutes = [
  {
    id: 'JWKS',
    method: 'GET',
    path: '/.well-known/jwks.json',
    area: 'auth',
    handler: 'auth/jwks',
    access: 'public',
    summary: 'Public keys that verify service bearer tokens',
    status: 200,
    response: accounts.jwks,
  },
  {
    id: 'A1',
    method: 'POST',
    path: '/v1/auth/login',
    area: 'auth',
    handler: 'auth/login',
    access: 'public',
    summary: 'Log in with email and password',
    status: 200,
    request: { body: accounts.loginBody },
    response: accounts.loginResponse,
  },
  {
    id: 'T1',
    method: 'POST',
    path: '/v1/auth/refresh',
    area: 'auth',
    handler: 'auth/refresh',
    access: 'public',
    summary: 'Exchange a refresh token for a new bearer token and refresh token (rotation with reuse detection)',
    status: 200,
    request: { body: accounts.refreshBody },
    response: accounts.tokenPairResponse,
  },
  {
    id: 'X6',
    method: 'POST',
    path: '/v1/auth/logout',
    area: 'auth',
    handler: 'auth/logout',
    access: 'users',
    summary: "Revoke a refresh token's family, or every family of the caller",
    status: 200,
    request: { body: accounts.logoutBody },
    response: accounts.envelope,
  },
] as const satisfies readonly RouteDef[];
