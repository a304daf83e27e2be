/**
 * What a 401 says of a credential that held once (contract section 3): which it was (expired, revoked, used) and how
 * to get a new one, for each kind of token. `credentialNoLongerValid` carries the sentence to the HTTP floor, which
 * adds RFC 6750's `WWW-Authenticate: Bearer error="invalid_token"` with it. A token that never held (a bad signature,
 * another issuer, not a JWT) keeps the contract's generic 401, which never says which.
 */
import type { Caller } from '#shared/auth/caller';
import { credentialNoLongerValid, type DomainError } from '#shared/errors';

const SIGN_IN = 'sign in again (POST /v1/auth/login)';
const CLIENT_TOKEN =
  'request a new one with your client credentials (POST /v1/auth/token, grant_type=client_credentials)';

/** A bearer token past its `exp` (epoch seconds). */
export function bearerExpired(kind: Caller['kind'], expiresAt: number): DomainError {
  const when = Number.isFinite(expiresAt) ? ` at ${new Date(expiresAt * 1000).toISOString()}` : '';
  const renew =
    kind === 'user' ? `renew it with your refresh token (POST /v1/auth/refresh) or ${SIGN_IN}` : CLIENT_TOKEN;
  return credentialNoLongerValid(`the bearer token expired${when}; ${renew}`);
}

/** A bearer token whose principal's generation moved on, or whose principal is gone. */
export function bearerRevoked(kind: Caller['kind']): DomainError {
  return credentialNoLongerValid(
    kind === 'user'
      ? `the bearer token was revoked (signed out everywhere, a password change, or the account was removed); ${SIGN_IN}`
      : `the bearer token was revoked (its client's scopes changed or its credentials were revoked); ${CLIENT_TOKEN}, ` +
          'or ask a SysAdmin for new credentials if those are refused',
  );
}

/** Why T1 refuses a refresh token. */
export type RefreshRefusal = 'unknown_or_expired' | 'reused' | 'revoked';

export function refreshRefused(why: RefreshRefusal): DomainError {
  const said: Record<RefreshRefusal, string> = {
    unknown_or_expired: 'the refresh token is unknown or expired (a refresh token lasts 30 days)',
    reused:
      'the refresh token was already used: each is single use, so its whole session is now revoked (reuse ' +
      'detection); keep only the newest refresh token T1 returns',
    revoked:
      'the session of the refresh token was revoked (signed out, a password change, the account was removed, or an ' +
      'older refresh token of the session was used again)',
  };
  return credentialNoLongerValid(`${said[why]}; ${SIGN_IN}`);
}
