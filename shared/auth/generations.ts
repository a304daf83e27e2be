/**
 * Token generations (revocation): a token is good only while it carries its principal's current generation, which
 * deleting a user, logging out everywhere, resetting a password or revoking a client moves on. Read per principal
 * (the handler kit, a WebSocket subscribe) or for many at once (a WebSocket fan-out: one BatchGetItem), through one
 * per-container cache trusted for at most `TOKEN_GENERATION_CACHE_MS` (60 s).
 */
import { currentTokenGeneration, userKey } from '#shared/accounts/users';
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { config } from '#shared/config';
import { getAll, mainTableName } from '#shared/db/client';
import { clientKey, clientTokenGeneration } from '#shared/tokens/clients';

type GenerationLookup = (id: string) => Promise<number | null>;

/** How each kind of principal's current generation is read. */
const lookups: Record<Caller['kind'], GenerationLookup> = {
  user: currentTokenGeneration,
  client: clientTokenGeneration,
};

const cache = new Map<string, { generation: number | null; readAt: number }>();

/** A principal as the generation cache keys it: `user#<id>`, `client#<id>`. */
export type PrincipalKey = `${Caller['kind']}#${string}`;
export const principalKey = (kind: Caller['kind'], id: string): PrincipalKey => `${kind}#${id}`;

function cached(key: PrincipalKey): { generation: number | null } | undefined {
  const hit = cache.get(key);
  return hit && clock.nowMs() - hit.readAt < config.tokenGenerationCacheMs ? hit : undefined;
}

function remember(key: PrincipalKey, generation: number | null): void {
  if (cache.size > 10_000) cache.clear();
  cache.set(key, { generation, readAt: clock.nowMs() });
}

export async function generationOf(kind: Caller['kind'], id: string): Promise<number | null> {
  const key = principalKey(kind, id);
  const hit = cached(key);
  if (hit) return hit.generation;
  const generation = await lookups[kind](id);
  remember(key, generation);
  return generation;
}

/** Where each kind of principal's generation is stored, for one BatchGetItem over many principals. */
const itemKeys: Record<Caller['kind'], (id: string) => { PK: string; SK: string }> = {
  user: userKey,
  client: clientKey,
};

/**
 * The current generation of many principals at once (a WebSocket fan-out's distinct subscribers): the same per
 * container cache as the single check, and one BatchGetItem (100 keys a call) for the principals it does not hold.
 * null for a principal that is gone, deleted or revoked.
 */
export async function currentGenerations(keys: Iterable<PrincipalKey>): Promise<Map<PrincipalKey, number | null>> {
  const found = new Map<PrincipalKey, number | null>();
  const byPk = new Map<string, PrincipalKey>();
  for (const key of new Set(keys)) {
    const hit = cached(key);
    if (hit) {
      found.set(key, hit.generation);
      continue;
    }
    const [kind, ...rest] = key.split('#') as [Caller['kind'], ...string[]];
    byPk.set(itemKeys[kind](rest.join('#')).PK, key);
  }
  if (byPk.size === 0) return found;
  const items = await getAll(
    mainTableName(),
    [...byPk.keys()].map((pk) => ({ PK: pk, SK: 'PROFILE' })),
    {
      ProjectionExpression: 'PK, token_gen, deleted_at, revoked_at',
    },
  );
  const generations = new Map<string, number | null>();
  for (const item of items) {
    const gone = Boolean(item['deleted_at']) || Boolean(item['revoked_at']);
    generations.set(String(item['PK']), gone ? null : Number(item['token_gen'] ?? 1));
  }
  for (const [pk, key] of byPk) {
    const generation = generations.get(pk) ?? null;
    remember(key, generation);
    found.set(key, generation);
  }
  return found;
}

/** Is a session recorded earlier still good: `expired` once its `exp` passed, `revoked` once its generation moved. */
export function sessionState(
  session: { expiresAt: number; generation: number },
  currentGeneration: number | null,
): 'current' | 'expired' | 'revoked' {
  if (!(session.expiresAt > clock.nowEpochSeconds())) return 'expired';
  return currentGeneration !== null && currentGeneration === session.generation ? 'current' : 'revoked';
}

/** The one-principal form of the check (a subscribe): the cached generation read, then `sessionState`. */
export async function checkSession(
  kind: Caller['kind'],
  id: string,
  session: { expiresAt: number; generation: number },
): Promise<'current' | 'expired' | 'revoked'> {
  if (!(session.expiresAt > clock.nowEpochSeconds())) return 'expired';
  return sessionState(session, await generationOf(kind, id));
}
