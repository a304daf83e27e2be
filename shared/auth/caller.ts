import { DEFAULT_PARTNER_SCOPES, INTERNAL_ROLES, type Role, type Scope } from '#shared/auth/roles';

/** Who is calling, as the authorizer established it. Domain functions decide tenancy from this, never from a body. */
export interface Caller {
  kind: 'user' | 'client';
  id: string;
  roles: Role[];
  /** The caller's organisation; null for SysAdmin without one, freelance drivers, and internal clients. */
  orgId: string | null;
  /** A partner token's scopes (contract section 3); absent for users and internal clients. */
  scopes?: readonly Scope[];
}

export const hasRole = (caller: Caller, ...roles: readonly Role[]): boolean =>
  caller.roles.some((role) => roles.includes(role));

/**
 * A partner client's scopes; none for anyone else. A partner token without a `scope` claim (issued before scopes
 * existed) holds the default, as its partner does.
 */
export const scopesOf = (caller: Pick<Caller, 'kind' | 'roles' | 'scopes'>): readonly Scope[] =>
  caller.kind === 'client' && caller.roles.includes('Partner') ? (caller.scopes ?? DEFAULT_PARTNER_SCOPES) : [];

/** A partner client holding the scope: it then answers as an OrgAdmin of its organisation for what the scope opens. */
export const hasScope = (caller: Caller, scope: Scope): boolean => scopesOf(caller).includes(scope);

export const isSysAdmin = (caller: Caller): boolean => hasRole(caller, 'SysAdmin');

export const isInternalClient = (caller: Caller): boolean =>
  caller.kind === 'client' && hasRole(caller, ...INTERNAL_ROLES);

/** SysAdmin and internal workers see every organisation; everybody else only their own. */
export const seesAllOrganisations = (caller: Caller): boolean => isSysAdmin(caller) || isInternalClient(caller);
