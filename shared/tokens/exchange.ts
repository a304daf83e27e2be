/**
 * T2: an OIDC token from the configured external identity platform (issuer, audience and JWKS URL from
 * configuration; the JWKS fetched and cached by jose) for a service bearer token. The `email` claim names the
 * account, and only with `email_verified: true` (else 401); no account → the spec's default payload.
 */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { findUserByEmail } from '#shared/accounts/users';
import { userCaller } from '#shared/auth/sessions';
import { issueBearerToken } from '#shared/auth/tokens';
import { forbidden, unauthenticated } from '#shared/errors';

let remote: { url: string; jwks: ReturnType<typeof createRemoteJWKSet> } | undefined;

function externalIssuer() {
  const issuer = process.env['EXTERNAL_ISSUER'];
  const audience = process.env['EXTERNAL_AUDIENCE'];
  const jwksUrl = process.env['EXTERNAL_JWKS_URL'];
  if (!issuer || !audience || !jwksUrl) return undefined;
  if (remote?.url !== jwksUrl)
    remote = { url: jwksUrl, jwks: createRemoteJWKSet(new URL(jwksUrl), { cacheMaxAge: 600_000 }) };
  return { issuer, audience, jwks: remote.jwks };
}

export const ACCOUNT_NOT_FOUND = {
  message: 'account not found',
  bearer_token: '',
  bearer_token_expired_at: 0,
} as const;

export async function exchangeExternalToken(authorization: string | undefined) {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization?.trim() ?? '');
  const external = externalIssuer();
  if (!match?.[1] || !external) throw unauthenticated();
  let email: unknown;
  try {
    const { payload } = await jwtVerify(match[1], external.jwks, {
      issuer: external.issuer,
      audience: external.audience,
      algorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'],
      requiredClaims: ['exp', 'sub'],
    });
    // Only an address the identity platform has verified names an account here (a missing claim is not a yes).
    if (payload['email_verified'] !== true) throw new Error('email not verified');
    email = payload['email'];
  } catch {
    throw unauthenticated();
  }
  if (typeof email !== 'string' || email === '') throw unauthenticated();
  const user = await findUserByEmail(email);
  if (!user || user.deleted_at) return { ...ACCOUNT_NOT_FOUND };
  if (!user.confirmed_at) throw forbidden('the account is not confirmed yet', 'account_not_confirmed');
  return { message: 'success', ...(await issueBearerToken(userCaller(user), user.token_gen)) };
}
