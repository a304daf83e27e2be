import type { Caller } from '#shared/auth/caller';
import { isRole, isScope } from '#shared/auth/roles';

/**
 * API Gateway's simple-response context carries strings only. The authorizer never denies: it annotates, and the
 * handler factory answers a missing or bad token with the contract's problem+json 401 (HTTP APIs cannot customise an
 * authorizer's own 401/403 bodies; only a request with no Authorization header at all gets API Gateway's own 401).
 */
export type AuthorizerContext = Record<string, string>;

/**
 * `authenticated` is 'true', 'false' or 'unchecked' (the authorizer could not read the signing keys; the handler kit
 * then verifies the token itself). The authorizer adds the token's `gen` and `exp`, which the handler kit checks.
 */
export function toAuthorizerContext(
  caller: Caller | null,
  token?: { generation: number; expiresAt: number },
): AuthorizerContext {
  if (!caller) return { authenticated: 'false' };
  return {
    authenticated: 'true',
    kind: caller.kind,
    id: caller.id,
    roles: caller.roles.join(','),
    org_id: caller.orgId ?? '',
    ...(caller.scopes ? { scope: caller.scopes.join(' ') } : {}),
    ...(token ? { gen: String(token.generation), exp: String(token.expiresAt) } : {}),
  };
}

export function fromAuthorizerContext(context: Record<string, unknown> | undefined): Caller | null {
  if (context?.['authenticated'] !== 'true' || typeof context['id'] !== 'string') return null;
  const roles = String(context['roles'] ?? '')
    .split(',')
    .filter(isRole);
  return {
    kind: context['kind'] === 'client' ? 'client' : 'user',
    id: context['id'],
    roles,
    orgId: typeof context['org_id'] === 'string' && context['org_id'] !== '' ? context['org_id'] : null,
    ...(typeof context['scope'] === 'string' ? { scopes: context['scope'].split(' ').filter(isScope) } : {}),
  };
}
