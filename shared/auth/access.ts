import { type Caller, scopesOf } from '#shared/auth/caller';
import type { Access, Scope } from '#shared/auth/roles';
import { forbidden, unauthenticated } from '#shared/errors';

type Principal = Pick<Caller, 'kind' | 'roles' | 'scopes'>;

/** What an operation is, for the 403's words: its spec id and the partner scopes that open it. */
export interface Operation {
  id: string;
  specId?: string | undefined;
  scopes?: readonly Scope[] | undefined;
}

/**
 * Does a principal pass the route's rule: one of its roles, or (a partner client) one of the partner scopes the
 * route names (contract section 3)? Finer rules, such as own organisation, are the domain's.
 */
export function accessAllows(access: Access, principal: Principal | null, scopes: readonly Scope[] = []): boolean {
  if (access === 'public') return true;
  if (!principal) return false;
  if (access === 'any') return true;
  if (access === 'users') return principal.kind === 'user';
  if (principal.roles.some((role) => access.includes(role))) return true;
  const held = scopesOf(principal);
  return scopes.some((scope) => held.includes(scope));
}

/**
 * 401 without a caller; 403 for a caller the rule refuses, whose `detail` names what the token has and what the
 * operation needs ("your token has Partner with scopes users:invite; I4b needs OrgAdmin, Merchant or a partner scope
 * imports").
 */
export function checkAccess(access: Access, caller: Caller | null, operation?: Operation): void {
  if (access === 'public') return;
  if (!caller) throw unauthenticated();
  if (!accessAllows(access, caller, operation?.scopes)) throw forbidden(refusal(access, caller, operation));
}

/** "A, B or C". */
const either = (names: readonly string[]): string =>
  names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;

/** What the caller's token holds, in the 403's words. */
export function describeCaller(caller: Principal): string {
  const roles = caller.roles.length > 0 ? caller.roles.join(', ') : 'no role';
  const kind = caller.kind === 'user' ? 'a user token' : 'a client token';
  if (caller.kind === 'client' && caller.roles.includes('Partner')) {
    const scopes = scopesOf(caller);
    return `${roles} with ${scopes.length > 0 ? `scopes ${scopes.join(', ')}` : 'no scopes'}`;
  }
  return caller.roles.length > 0 ? roles : `${kind} with no role`;
}

/** What an operation needs, in the 403's words (and /openapi.json's). */
export function describeNeed(access: Exclude<Access, 'public'>, scopes: readonly Scope[] = []): string {
  if (access === 'any') return 'any valid token';
  if (access === 'users') return 'a user token (partner and internal client tokens may not call it)';
  const partner = scopes.length > 0 ? [`a partner scope ${scopes.join(' or ')}`] : [];
  return either([...access, ...partner]);
}

function refusal(access: Exclude<Access, 'public'>, caller: Caller, operation: Operation | undefined): string {
  const name = operation ? (operation.specId ?? operation.id) : 'this operation';
  return `your token has ${describeCaller(caller)}; ${name} needs ${describeNeed(access, operation?.scopes)}`;
}
