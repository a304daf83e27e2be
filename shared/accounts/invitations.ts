/**
 * Invitations (A4–A9). Inviting creates the account in the inviter's (or the named) organisation with one role and a
 * pending invitation; accepting sets name and password and confirms it. Re-inviting a pending address replaces the
 * token, and only for an inviter who could grant the pending role (else 403). An address that already has an account,
 * or a pending invitation to another organisation, is one neutral 409 (the answer does not tell which).
 */
import { sendInvitation } from '#shared/accounts/mails';
import { type Organisation, requireOrganisation } from '#shared/accounts/organisations';
import { buildUser, findUserByEmail, getUser, saveUser, type UserRecord, updateUser } from '#shared/accounts/users';
import { describeCaller } from '#shared/auth/access';
import { type Caller, isSysAdmin } from '#shared/auth/caller';
import { checkToken, issueToken } from '#shared/auth/one-time-tokens';
import { hashPassword } from '#shared/auth/passwords';
import { type Role, roleById } from '#shared/auth/roles';
import { clock } from '#shared/clock';
import { conflict, forbidden, gone, invalidAt, isDomainError } from '#shared/errors';

/**
 * Which roles each inviter may hand out, and the role given when the body names none. No inviter hands out more than
 * it holds (issue 42): an OrgAdmin its own role and those below it, an OrgTransporter its own and OrgDriver, a partner
 * (a client acting for the organisation, which holds no user role at all) OrgDriver only (contract section 3). A
 * re-invitation replaces the pending role, so it is held to the same list (`inviteInto`).
 */
const POLICIES = {
  orgAdmin: { roles: ['OrgAdmin', 'OrgDriver', 'OrgTransporter'], fallback: 'OrgDriver' },
  orgTransporter: { roles: ['OrgDriver', 'OrgTransporter'], fallback: 'OrgDriver' },
  sysAdmin: { roles: ['OrgAdmin', 'OrgDriver', 'OrgTransporter', 'Merchant'], fallback: 'OrgAdmin' },
  bulk: { roles: ['OrgAdmin', 'OrgDriver', 'OrgTransporter', 'Merchant'], fallback: 'OrgDriver' },
  partner: { roles: ['OrgDriver'], fallback: 'OrgDriver' },
} as const satisfies Record<string, { roles: readonly Role[]; fallback: Role }>;

const mayGrant = (policy: InvitationPolicy, role: Role) => (POLICIES[policy].roles as readonly Role[]).includes(role);

/** The 403 of a role the inviter may not hand out: what the caller has, what it asked for, what it may give. */
const notYoursToGrant = (caller: Caller, policy: InvitationPolicy, role: Role, what: string) =>
  forbidden(
    `your token has ${describeCaller(caller)}; it may ${what} with the role ${POLICIES[policy].roles.join(' or ')} only, not ${role}`,
  );

export type InvitationPolicy = keyof typeof POLICIES;

export interface InvitationRequest {
  email: string;
  /** The organisation named in the body (A7–A9); A5/A6 use the caller's own. */
  orgId?: string | undefined;
  roleId?: string | undefined;
}

function roleFor(caller: Caller, policy: InvitationPolicy, roleId: string | undefined, field: string): Role {
  if (roleId === undefined) return POLICIES[policy].fallback;
  const role = roleById(roleId);
  if (!role) throw invalidAt(field, 'names no role');
  if (!mayGrant(policy, role.name)) throw notYoursToGrant(caller, policy, role.name, 'invite a user');
  return role.name;
}

/** The organisation an invitation goes into, decided from the token's organisation for everyone but SysAdmin. */
async function targetOrganisation(caller: Caller, policy: InvitationPolicy, named: string | undefined) {
  if (policy === 'orgAdmin' || policy === 'orgTransporter') {
    if (!caller.orgId) throw forbidden('your account belongs to no organisation');
    return requireOrganisation(caller.orgId, 'user');
  }
  if (policy === 'partner' && named !== caller.orgId) {
    throw forbidden(
      `your token acts for ${caller.orgId ? `the organisation ${caller.orgId}` : 'no organisation'}; a partner may invite into its own organisation only`,
    );
  }
  if (!isSysAdmin(caller) && policy !== 'partner') {
    throw forbidden(`your token has ${describeCaller(caller)}; inviting into a named organisation needs SysAdmin`);
  }
  return requireOrganisation(named!, 'user.org_id');
}

/** One answer for every address that cannot be invited here, whatever the reason (no enumeration). */
const notInvitable = () => conflict('this address cannot be invited');

async function inviteInto(
  caller: Caller,
  org: Organisation,
  email: string,
  role: Role,
  policy: InvitationPolicy,
): Promise<UserRecord> {
  const existing = await findUserByEmail(email);
  if (existing) {
    if (!existing.invitation_token_hash || existing.org_id !== org.id) throw notInvitable();
    // Re-inviting replaces the pending role and voids the pending token: only for who could grant that role.
    const pending = existing.roles.find((held) => !mayGrant(policy, held));
    if (pending) throw notYoursToGrant(caller, policy, pending, 're-invite a user');
    const issued = issueToken('invitation', existing.id, existing.invitation_token_hash);
    const updated = await updateUser(existing, { invitation_token_hash: issued.hash, roles: [role] }, issued.items);
    await sendInvitation(updated.email, issued.token, org.name);
    return updated;
  }
  // The token names the user, so the user is built first; both are written in one transaction.
  const user = buildUser({ email, name: '', roles: [role], org_id: org.id });
  const issued = issueToken('invitation', user.id);
  const invited = { ...user, invitation_token_hash: issued.hash };
  await saveUser(undefined, invited, issued.items);
  await sendInvitation(email, issued.token, org.name);
  return invited;
}

/** A5, A6, A7, A9. */
export async function invite(
  caller: Caller,
  policy: InvitationPolicy,
  request: InvitationRequest,
): Promise<UserRecord> {
  const org = await targetOrganisation(caller, policy, request.orgId);
  const role = roleFor(caller, policy, request.roleId, 'user.role_id');
  return inviteInto(caller, org, request.email, role, policy);
}

export interface BulkResult {
  invited: string[];
  failed: string[];
  failures: { email: string; reason: string }[];
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A8: each address on its own; a malformed, duplicate or taken one lands in `failed`, never aborting the rest. */
export async function bulkInvite(
  caller: Caller,
  emails: string[],
  orgId: string,
  roleId?: string,
): Promise<BulkResult> {
  const org = await targetOrganisation(caller, 'bulk', orgId);
  const role = roleFor(caller, 'bulk', roleId, 'user.role_id');
  const result: BulkResult = { invited: [], failed: [], failures: [] };
  const seen = new Set<string>();
  const fail = (email: string, reason: string) => {
    result.failed.push(email);
    result.failures.push({ email, reason });
  };
  const candidates: string[] = [];
  for (const raw of emails) {
    const email = raw.trim();
    if (email.length > 254 || !EMAIL.test(email)) fail(raw, 'not an email address');
    else if (seen.has(email.toLowerCase())) fail(raw, 'duplicate in this request');
    else {
      seen.add(email.toLowerCase());
      candidates.push(email);
    }
  }
  // A few at a time: fast, without a burst that the table would throttle.
  for (let i = 0; i < candidates.length; i += 10) {
    const batch = candidates.slice(i, i + 10);
    const outcomes = await Promise.allSettled(batch.map((email) => inviteInto(caller, org, email, role, 'bulk')));
    outcomes.forEach((outcome, j) => {
      const email = batch[j]!;
      if (outcome.status === 'fulfilled') result.invited.push(email);
      else if (isDomainError(outcome.reason)) fail(email, outcome.reason.message);
      else throw outcome.reason;
    });
  }
  return result;
}

/** A4: name and password set, account confirmed, token used — in one transaction. */
export async function acceptInvitation(token: string, name: string, password: string): Promise<UserRecord> {
  const redeemable = await checkToken('invitation', token, 'user.invitation_token');
  const user = await getUser(redeemable.userId);
  if (user && !user.deleted_at && redeemable.usedByThisRequest) return user;
  if (!user || user.deleted_at || user.invitation_token_hash !== redeemable.hash) {
    throw gone('this invitation is no longer valid');
  }
  try {
    return await updateUser(
      user,
      {
        name,
        password_hash: await hashPassword(password),
        confirmed_at: user.confirmed_at ?? clock.nowIso(),
        invitation_token_hash: null,
      },
      [redeemable.useItem],
    );
  } catch (error) {
    if (isDomainError(error, 'conflict')) throw gone('this invitation was already used');
    throw error;
  }
}
