/**
 * The authorizer's core: verify the bearer token (ES256 only, issuer, audience, expiry) and check that the
 * principal's token generation has not moved on since the token was issued (deleted users, logout everywhere).
 * Generations are cached for at most 60 seconds, so a revocation takes effect within a minute.
 */

import { currentTokenGeneration } from '#shared/accounts/users';
import type { Caller } from '#shared/auth/caller';
import { verifyBearerToken } from '#shared/auth/tokens';
import { clock } from '#shared/clock';
import { config } from '#shared/config';
import { clientTokenGeneration } from '#shared/tokens/clients';

type GenerationLookup = (id: string) => Promise<number | null>;

/** How each kind of principal's current generation is read. */
const lookups: Record<Caller['kind'], GenerationLookup> = {
  user: currentTokenGeneration,
  client: clientTokenGeneration,
};

const cache = new Map<string, { generation: number | null; readAt: number }>();

async function generationOf(kind: Caller['kind'], id: string): Promise<number | null> {
  const key = `${kind}#${id}`;
  const hit = cache.get(key);
  if (hit && clock.nowMs() - hit.readAt < config.tokenGenerationCacheMs) return hit.generation;
  const generation = await lookups[kind](id);
  if (cache.size > 10_000) cache.clear();
  cache.set(key, { generation, readAt: clock.nowMs() });
  return generation;
}

/** Returns the caller, or null when the header is missing or anything about the token is wrong. */
export async function authenticate(authorization: string | undefined): Promise<Caller | null> {
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]+)$/i.exec(authorization?.trim() ?? '');
  if (!match?.[1]) return null;
  try {
    const token = await verifyBearerToken(match[1]);
    const current = await generationOf(token.kind, token.id);
    if (current === null || token.generation !== current) return null;
    const { generation: _g, expiresAt: _e, ...caller } = token;
    return caller;
  } catch {
    return null;
  }
}

export { fromAuthorizerContext, toAuthorizerContext } from '#shared/auth/authorizer-context';
