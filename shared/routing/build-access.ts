/**
 * Who may build runsheets (X23, and X31 as X23): the route table's rule for them (shared/routes/routing.ts), here so
 * that a build checking its caller again (caller-access.ts) applies the very same rule.
 */
import type { Role, Scope } from '#shared/auth/roles';

export const BUILD_ROLES: readonly Role[] = ['OrgAdmin', 'OrgTransporter', 'Merchant', 'SysAdmin'];
export const BUILD_SCOPES: readonly Scope[] = ['plannings'];
