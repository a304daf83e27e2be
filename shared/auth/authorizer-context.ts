import type { Caller } from '#shared/auth/caller';
import { isRole } from '#shared/auth/roles';

/**
 * API Gateway's simple-response context carries strings only. The authorizer never denies: it annotates, and the
 * handler factory answers a missing caller with the contract's problem+json 401 (HTTP APIs cannot customise an
 * authorizer's own 401/403 bodies).
 */
export type AuthorizerContext = Record<string, string>;

export function toAuthorizerContext(caller: Caller | null): AuthorizerContext {
  if (!caller) return { authenticated: 'false' };
  return {
    authenticated: 'true',
    kind: caller.kind,
    id: caller.id,
    roles: caller.roles.join(','),
    org_id: caller.orgId ?? '',
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
  };
}
