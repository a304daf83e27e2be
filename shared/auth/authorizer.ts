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
 *   container for at most 60 s. A failed read throws the dependency's error (a 503 `unavailable`), never "no caller".
 */

import { type AuthorizerContext, fromAuthorizerContext, toAuthorizerContext } from '#shared/auth/authorizer-context';
import type { Caller } from '#shared/auth/caller';
import { generationOf } from '#shared/auth/generations';
import { localKeySet, type VerifiedToken, verifyWithKeySet } from '#shared/auth/tokens';
import { isDependencyFailure } from '#shared/aws/faults';
import { clock } from '#shared/clock';
import { unavailable } from '#shared/http/problems';

function bearer(authorization: string | undefined): string | undefined {
  return /^Bearer\s+([A-Za-z0-9._~+/=-]+)$/i.exec(authorization?.trim() ?? '')?.[1];
}

/**
 * Verifies the JWT only. `'unchecked'` when the signing keys could not be read (a dependency failure), null when the
 * token is missing or wrong in any way.
 */
export async function verifyToken(authorization: string | undefined): Promise<VerifiedToken | null | 'unchecked'> {
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
  } catch {
    return null;
  }
}

/** The authorizer's answer: who is calling (signature, iss, aud, exp checked), nobody, or "could not check". */
export async function annotate(authorization: string | undefined): Promise<AuthorizerContext> {
  const verified = await verifyToken(authorization);
  if (verified === 'unchecked') return { authenticated: 'unchecked' };
  return toAuthorizerContext(verified, verified ?? undefined);
}

/** False when the token was issued before the principal's current generation (or the principal is gone). */
async function isCurrent(kind: Caller['kind'], id: string, generation: number): Promise<boolean> {
  const current = await generationOf(kind, id);
  return current !== null && generation === current;
}

/**
 * The handler kit's side: the caller from the authorizer's annotation, with `exp` and the token generation checked
 * here. Throws 503 `unavailable` when it cannot check; null when there is no valid caller.
 */
export async function resolveCaller(
  context: Record<string, unknown> | undefined,
  authorization: string | undefined,
): Promise<Caller | null> {
  if (context?.['authenticated'] === 'unchecked') {
    const verified = await verifyToken(authorization);
    if (verified === 'unchecked') throw unavailable(1, 'the token could not be checked now; retry shortly');
    if (!verified) return null;
    if (!(await isCurrent(verified.kind, verified.id, verified.generation))) return null;
    const { generation: _g, expiresAt: _e, ...caller } = verified;
    return caller;
  }
  const caller = fromAuthorizerContext(context);
  if (!caller) return null;
  const expiresAt = Number(context?.['exp']);
  if (context?.['exp'] !== undefined && !(expiresAt > clock.nowEpochSeconds())) return null;
  // A context without `gen` is one a test built by hand (toAuthorizerContext(caller)); the authorizer always sets it.
  if (context?.['gen'] !== undefined && !(await isCurrent(caller.kind, caller.id, Number(context['gen'])))) {
    return null;
  }
  return caller;
}

/**
 * Everything in one call (tests): the caller, or null for a bad or revoked token. Throws (a dependency error or 503)
 * when it could not check.
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
 * dependency error or 503) when it could not check.
 */
export async function authenticateSession(authorization: string | undefined): Promise<Session | null> {
  const verified = await verifyToken(authorization);
  if (verified === 'unchecked') throw unavailable(1, 'the token could not be checked now; retry shortly');
  if (!verified || !(verified.expiresAt > clock.nowEpochSeconds())) return null;
  if (!(await isCurrent(verified.kind, verified.id, verified.generation))) return null;
  const { generation, expiresAt, ...caller } = verified;
  return { caller, generation, expiresAt };
}

export { fromAuthorizerContext, toAuthorizerContext };
