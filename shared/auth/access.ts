import type { Caller } from '#shared/auth/caller';
import { forbidden, unauthenticated } from '#shared/http/problems';
import type { Access } from '#shared/routes';

type Principal = Pick<Caller, 'kind' | 'roles'>;

/** Does a principal pass the route's role rule? (Finer rules, such as own organisation, are the domain's.) */
export function accessAllows(access: Access, principal: Principal | null): boolean {
  if (access === 'public') return true;
  if (!principal) return false;
  if (access === 'any') return true;
  if (access === 'users') return principal.kind === 'user';
  return principal.roles.some((role) => access.includes(role));
}

/** 401 without a caller, 403 for a caller whose role may not call the operation. */
export function checkAccess(access: Access, caller: Caller | null): void {
  if (access === 'public') return;
  if (!caller) throw unauthenticated();
  if (!accessAllows(access, caller)) throw forbidden();
}
