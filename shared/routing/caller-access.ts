/**
 * A build acts for its caller long after X23 checked them (a queue's wait, a search of minutes), so it checks their
 * access again (contract 4.10, issue 51 item 7): when it starts solving and again before it applies. The caller is
 * read as they stand now, from the records the authorizer's generation check reads (a user's roles, organisation and
 * deletion; a partner's scopes, organisation and revocation: the same scope rule as the API's, shared/auth/access.ts),
 * and must still pass X23's rule for the build's organisation. One who no longer does fails the build with
 * `access_revoked`, and nothing is added.
 */
import { getUser } from '#shared/accounts/users';
import { accessAllows } from '#shared/auth/access';
import { type Caller, seesAllOrganisations } from '#shared/auth/caller';
import { conflict } from '#shared/errors';
import { BUILD_ROLES, BUILD_SCOPES } from '#shared/routing/build-access';
import type { RouteBuild } from '#shared/routing/builds';
import { findClient, partnerScopesOf } from '#shared/tokens/clients';

/** The caller as their records stand now; undefined when they are gone, deleted or revoked. */
async function callerNow(caller: Caller): Promise<Caller | undefined> {
  if (caller.kind === 'user') {
    const user = await getUser(caller.id, { consistent: true });
    if (!user || user.deleted_at) return undefined;
    return { kind: 'user', id: user.id, roles: user.roles, orgId: user.org_id ?? null };
  }
  const client = await findClient(caller.id);
  if (!client || client.revoked_at) return undefined;
  return {
    kind: 'client',
    id: client.id,
    roles: client.roles,
    orgId: client.org_id,
    ...(client.kind === 'partner' ? { scopes: partnerScopesOf(client) } : {}),
  };
}

export const accessRevoked = (detail: string) => conflict(detail, 'access_revoked');

/** Throws `access_revoked` unless the build's caller may still build for its organisation. */
export async function checkCallerStillMay(build: Pick<RouteBuild, 'caller' | 'org_id'>): Promise<void> {
  const now = await callerNow(build.caller);
  const allowed =
    now !== undefined &&
    accessAllows(BUILD_ROLES, now, BUILD_SCOPES) &&
    (seesAllOrganisations(now) || now.orgId === build.org_id);
  if (!allowed)
    throw accessRevoked(
      'whoever asked for this build no longer may build runsheets for this organisation (their role, organisation ' +
        'or partner scopes changed, or they were removed): nothing was added; someone who may should build again',
    );
}
