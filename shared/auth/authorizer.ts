/**
 * Token checks, in two places (see docs/design.md, "The authorizer"):
 *
 * - the API Gateway Lambda authorizer (`annotate`) only verifies the JWT: signature with the pinned ES256, issuer,
 *   audience, expiry. API Gateway caches its answer per Authorization header for the result TTL, so it must not
 *   depend on anything that changes meanwhile. It never denies: a bad token is annotated "no caller", and when the
 *   signing keys cannot be read it annotates "unchecked" (not "no caller": a key store blip is not a bad token).
 * - the handler kit (`resolveCaller`, called by shared/http/endpoint.ts) trusts that annotation only after checking
 *   `exp` again (the gateway's cached answer may outlive the token), verifies an "unchecked" token itself, and checks
 *   the principal's token generation (revocation: deleted users, logout everywhere, revoked clients), cached per
 *   container for at most 60 s. A failed read throws (the dependency's error, or `dependencyUnavailable`: a 503
 *   `unavailable` at the HTTP floor), never "no caller".
 */

import { errors } from 'jose';
import { type AuthorizerContext, fromAuthorizerContext, toAuthorizerContext } from '#shared/auth/authorizer-context';
import type { Caller } from '#shared/auth/caller';
import { generationOf } from '#shared/auth/generations';
import { bearerExpired, bearerRevoked } from '#shared/auth/refusals';
import { localKeySet, type VerifiedToken, verifyWithKeySet } from '#shared/auth/tokens';
import { isDependencyFailure } from '#shared/aws/faults';
import { clock } from '#shared/clock';
import { dependencyUnavailable } from '#shared/errors';

function bearer(authorization: string | undefined): string | undefined {
  return /^Bearer\s+([A-Za-z0-9._~+/=-]+)$/i.exec(authorization?.trim() ?? '')?.[1];
}

/** A token of ours, well signed for this issuer and audience, that is only past its `exp`. */
export interface ExpiredToken {
  expired: true;
  kind: Caller['kind'];
  /** Epoch seconds. */
  expiresAt: number;
}

const isExpired = (checked: VerifiedToken | ExpiredToken): checked is ExpiredToken => 'expired' in checked;

/**
 * Verifies the JWT only. `'unchecked'` when the signing keys could not be read (a dependency failure), an
 * ExpiredToken when all holds but `exp` (jose checks the signature, issuer and audience before the times), null when
 * the token is missing or wrong in any other way.
 */
export async function verifyToken(
  authorization: string | undefined,
): Promise<VerifiedToken | ExpiredToken | null | 'unchecked'> {
  const token = bearer(authorization);
  if (!token) return null;
  let keys: Awaited<ReturnType<typeof localKeySet>>;
  try {
    keys = await localKeySet();
  } catch (error) {
    if (isDependencyFailure(error)) return 'unchecked';
    throw error;
  }
  try {
    return await verifyWithKeySet(token, keys);
  } catch (error) {
    if (!(error instanceof errors.JWTExpired) || error.claim !== 'exp') return null;
    return {
      expired: true,
      kind: error.payload['kind'] === 'client' ? 'client' : 'user',
      expiresAt: Number(error.payload.exp),
    };
  }
}

/**
 * The authorizer's answer: who is calling (signature, iss, aud, exp checked), nobody, or "could not check". An
 * expired token of ours is nobody too, annotated `refused: 'expired'` with its kind and `exp`, so that the function
 * answers the contract's "expired, and how to get a new one" rather than the generic 401.
 */
export async function annotate(authorization: string | undefined): Promise<AuthorizerContext> {
  const verified = await verifyToken(authorization);
  if (verified === 'unchecked') return { authenticated: 'unchecked' };
  if (verified && isExpired(verified)) {
    return { authenticated: 'false', refused: 'expired', kind: verified.kind, exp: String(verified.expiresAt) };
  }
  return toAuthorizerContext(verified, verified ?? undefined);
}

/** False when the token was issued before the principal's current generation (or the principal is gone). */
async function isCurrent(kind: Caller['kind'], id: string, generation: number): Promise<boolean> {
  const current = await generationOf(kind, id);
  return current !== null && generation === current;
}

/**
 * The handler kit's side: the caller from the authorizer's annotation, with `exp` and the token generation checked
 * here. Throws `dependencyUnavailable` (a 503) when it cannot check; throws the contract's "expired" or "revoked"
 * 401 for a token of ours that held once (refusals.ts); null when there is no valid caller.
 */
export async function resolveCaller(
  context: Record<string, unknown> | undefined,
  authorization: string | undefined,
): Promise<Caller | null> {
  if (context?.['authenticated'] === 'unchecked') {
    const verified = await verifyToken(authorization);
    if (verified === 'unchecked') throw dependencyUnavailable(1, 'the token could not be checked now; retry shortly');
    if (!verified) return null;
    if (isExpired(verified)) throw bearerExpired(verified.kind, verified.expiresAt);
    if (!(await isCurrent(verified.kind, verified.id, verified.generation))) throw bearerRevoked(verified.kind);
    const { generation: _g, expiresAt: _e, ...caller } = verified;
    return caller;
  }
  if (context?.['refused'] === 'expired') {
    throw bearerExpired(context['kind'] === 'client' ? 'client' : 'user', Number(context['exp']));
  }
  const caller = fromAuthorizerContext(context);
  if (!caller) return null;
  // API Gateway's cached answer may outlive the token.
  const expiresAt = Number(context?.['exp']);
  if (context?.['exp'] !== undefined && !(expiresAt > clock.nowEpochSeconds()))
    throw bearerExpired(caller.kind, expiresAt);
  // A context without `gen` is one a test built by hand (toAuthorizerContext(caller)); the authorizer always sets it.
  if (context?.['gen'] !== undefined && !(await isCurrent(caller.kind, caller.id, Number(context['gen'])))) {
    throw bearerRevoked(caller.kind);
  }
  return caller;
}

/**
 * Everything in one call (tests): the caller, or null for a bad or revoked token. Throws (a dependency error or
 * `dependencyUnavailable`) when it could not check.
 */
export async function authenticate(authorization: string | undefined): Promise<Caller | null> {
  return (await authenticateSession(authorization))?.caller ?? null;
}

/** A checked token's caller with the token's generation and expiry, which a WebSocket connection keeps checking. */
export interface Session {
  caller: Caller;
  generation: number;
  /** Epoch seconds. */
  expiresAt: number;
}

/**
 * WebSocket $connect: the caller with the token's `gen` and `exp`, or null for a bad or revoked token. Throws (a
 * dependency error or `dependencyUnavailable`) when it could not check.
 */
export async function authenticateSession(authorization: string | undefined): Promise<Session | null> {
  const verified = await verifyToken(authorization);
  if (verified === 'unchecked') throw dependencyUnavailable(1, 'the token could not be checked now; retry shortly');
  if (!verified || isExpired(verified) || !(verified.expiresAt > clock.nowEpochSeconds())) return null;
  if (!(await isCurrent(verified.kind, verified.id, verified.generation))) return null;
  const { generation, expiresAt, ...caller } = verified;
  return { caller, generation, expiresAt };
}

export { fromAuthorizerContext, toAuthorizerContext };
