/** The auth area's operations (one entry each; see shared/routes.ts for the whole table). */
import * as accounts from '#shared/accounts/schemas';
import { THROTTLES } from '#shared/routes/throttles';
import type { RouteDef } from '#shared/routes/types';

export const authRoutes = [
  {
    id: 'JWKS',
    method: 'GET',
    path: '/.well-known/jwks.json',
    area: 'auth',
    handler: 'auth/jwks',
    needs: { signingKey: 'verify' },
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
    needs: { main: 'write', signingKey: 'sign' },
    unauthenticated: 'Wrong email or password (the same answer for both)',
    access: 'public',
    throttle: THROTTLES.signIn,
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
    needs: { main: 'write', signingKey: 'sign' },
    unauthenticated:
      'A retired, reused, revoked or unknown refresh token: `detail` and `WWW-Authenticate: Bearer ' +
      'error="invalid_token", error_description="…"` say which, and to sign in again',
    access: 'public',
    throttle: THROTTLES.refresh,
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
    needs: { main: 'write' },
    access: 'users',
    summary: "Revoke a refresh token's family, or every family of the caller",
    status: 200,
    request: { body: accounts.logoutBody },
    response: accounts.envelope,
  },
] as const satisfies readonly RouteDef[];
