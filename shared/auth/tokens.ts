/**
 * Service bearer tokens: ES256 JWTs with `iss`, `aud`, `sub`, `roles`, `org_id`, `iat`, `exp` (1 hour, or `BEARER_TTL_S`), `jti`, and
 * `gen`, the principal's token generation at issue time (bumped by logout-everywhere and deletion). A partner's token
 * also carries its scopes in `scope` (space-separated, RFC 8693's claim): a scope change takes effect at the next token.
 */
import { createLocalJWKSet, jwtVerify, SignJWT } from 'jose';
import type { Caller } from '#shared/auth/caller';
import { signingKeys } from '#shared/auth/keys';
import { isRole, isScope, type Role } from '#shared/auth/roles';
import { clock } from '#shared/clock';
import { config } from '#shared/config';
import { newUuid } from '#shared/ids';

export interface IssuedToken {
  bearer_token: string;
  /** Expiry as epoch seconds. */
  bearer_token_expired_at: number;
}

export interface VerifiedToken extends Caller {
  generation: number;
  expiresAt: number;
}

export async function issueBearerToken(caller: Caller, generation: number): Promise<IssuedToken> {
  const { kid, privateKey } = await signingKeys();
  const issuedAt = clock.nowEpochSeconds();
  const expiresAt = issuedAt + config.bearerTtlSeconds;
  const token = await new SignJWT({
    roles: caller.roles,
    ...(caller.orgId ? { org_id: caller.orgId } : {}),
    kind: caller.kind,
    ...(caller.scopes ? { scope: caller.scopes.join(' ') } : {}),
    gen: generation,
  })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
    .setIssuer(config.tokenIssuer)
    .setAudience(config.tokenAudience)
    .setSubject(caller.id)
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt)
    .setJti(newUuid())
    .sign(privateKey);
  return { bearer_token: token, bearer_token_expired_at: expiresAt };
}

let verifier: { keys: unknown; jwks: ReturnType<typeof createLocalJWKSet> } | undefined;

/** One key set per container: jose then imports each public key once, not on every verification. */
export async function localKeySet() {
  const { publicJwks } = await signingKeys();
  if (verifier?.keys !== publicJwks) verifier = { keys: publicJwks, jwks: createLocalJWKSet({ keys: publicJwks }) };
  return verifier.jwks;
}

/** Verifies signature (ES256 only), issuer, audience and expiry; throws on anything wrong. */
export async function verifyBearerToken(token: string): Promise<VerifiedToken> {
  return verifyWithKeySet(token, await localKeySet());
}

/** The same with the key set already in hand (so that "keys unavailable" and "bad token" stay apart). */
export async function verifyWithKeySet(
  token: string,
  keys: Awaited<ReturnType<typeof localKeySet>>,
): Promise<VerifiedToken> {
  const { payload } = await jwtVerify(token, keys, {
    algorithms: ['ES256'],
    issuer: config.tokenIssuer,
    audience: config.tokenAudience,
    currentDate: new Date(clock.nowMs()),
    requiredClaims: ['sub', 'exp', 'iat', 'jti'],
  });
  const roles = Array.isArray(payload['roles']) ? payload['roles'].filter((r): r is Role => isRole(String(r))) : [];
  const kind = payload['kind'] === 'client' ? 'client' : 'user';
  const scope = payload['scope'];
  return {
    kind,
    id: payload.sub!,
    roles,
    orgId: typeof payload['org_id'] === 'string' ? payload['org_id'] : null,
    ...(typeof scope === 'string' ? { scopes: scope.split(' ').filter(isScope) } : {}),
    generation: typeof payload['gen'] === 'number' ? payload['gen'] : 0,
    expiresAt: payload.exp!,
  };
}
