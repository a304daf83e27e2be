/** Changes users make to themselves (A12, A20–A22, A24, X9) and the profile edit of A13. */
import { findVisibleUser } from '#shared/accounts/directory';
import { emailChangedMail } from '#shared/accounts/mails';
import { deliverOutboxMail, outboxMail } from '#shared/accounts/outbox';
import { dutyOf, getUser, saveDriverDuty, toUserView, type UserRecord, updateUser } from '#shared/accounts/users';
import type { Caller } from '#shared/auth/caller';
import { hashPassword, verifyPassword } from '#shared/auth/passwords';
import { startSession, type TokenPair } from '#shared/auth/sessions';
import { clearLoginFailures, countLoginAttempt } from '#shared/auth/throttle';
import { conflict, forbidden, invalidAt, isDomainError, notFound } from '#shared/errors';
import { newSecret } from '#shared/ids';
import { syncServiceTypes } from '#shared/locations/locations';

async function self(caller: Caller, options: { consistent?: boolean } = {}): Promise<UserRecord> {
  const user = await getUser(caller.id, options);
  if (!user || user.deleted_at) throw notFound('user');
  return user;
}

const defined = <T extends object>(changes: T) =>
  Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<UserRecord>;

/** X9. */
export async function me(caller: Caller) {
  return { user: toUserView(await self(caller)) };
}

/**
 * The caller's current password, checked before a change that needs it (A12, A22, A24): a wrong or missing one is a
 * 400 at `path`. The check counts against the address like a login (shared/auth/throttle.ts), so a bearer token
 * alone is no unthrottled password oracle.
 */
async function requireCurrentPassword(user: UserRecord, presented: string | undefined, path: string): Promise<void> {
  await countLoginAttempt(user.email);
  if (!(await verifyPassword(presented ?? '', user.password_hash))) {
    throw invalidAt(path, 'is not your current password');
  }
  await clearLoginFailures(user.email);
}

/**
 * A password change (A12, A24) ends every session of the user: the token generation moves on in the same write, so
 * every bearer token and refresh family issued before (the caller's own included) stops working. The caller gets a
 * new session to go on with, which the reply carries.
 */
async function changePassword(user: UserRecord, changes: Partial<UserRecord>, password: string): Promise<TokenPair> {
  const updated = await updateUser(user, {
    ...changes,
    password_hash: await hashPassword(password),
    token_gen: user.token_gen + 1,
  });
  return startSession(updated);
}

/**
 * A12: a new password needs the current one (a wrong one is 400 at `user.current_password`); a password change
 * answers the caller's new session.
 */
export async function updateOwnAccount(
  caller: Caller,
  input: { name?: string | undefined; current_password?: string | undefined; password?: string | undefined },
): Promise<TokenPair | undefined> {
  const user = await self(caller);
  const changes: Partial<UserRecord> = defined({ name: input.name });
  if (input.password === undefined) {
    await updateUser(user, changes);
    return undefined;
  }
  await requireCurrentPassword(user, input.current_password, 'user.current_password');
  return changePassword(user, changes, input.password);
}

/** A13: SysAdmin any user, OrgAdmin users of the own organisation. */
export async function updateProfile(
  caller: Caller,
  input: { id: string; name?: string | undefined; phone_number?: number | null | undefined },
): Promise<void> {
  // The id is in the body: one that names no user the caller may see is a bad input (400), not a missing resource.
  const user = await findVisibleUser(caller, input.id).catch((error: unknown) => {
    if (isDomainError(error, 'not_found')) throw invalidAt('user.id', 'names no user you can edit');
    throw error;
  });
  await updateUser(user, defined({ name: input.name, phone_number: input.phone_number }));
}

/** A20. */
export async function updateSelf(
  caller: Caller,
  input: { name?: string | undefined; phone_number?: number | null | undefined },
): Promise<void> {
  await updateUser(await self(caller), defined(input));
}

/**
 * A21: optimistic on `driver_profile.version_rev`; a stale one is 409, a successful change issues the next. The duty
 * state (X15) is kept as it is and is no part of the version: a toggle between the app's read and this edit, or
 * during it, does not make the edit stale (a write that meets such a change reads the user again and, with the
 * version still the one sent, applies the edit to what is current).
 */
export async function updateDriver(
  caller: Caller,
  input: {
    phone_number?: number | null | undefined;
    driver_profile: { version_rev: string; service_types?: string[] | undefined };
  },
) {
  for (let attempt = 1; ; attempt++) {
    const user = await self(caller, { consistent: attempt > 1 });
    const profile = user.driver_profile;
    if (!profile) throw forbidden('only drivers have a driver profile');
    if (profile.version_rev !== input.driver_profile.version_rev) {
      throw conflict('driver_profile.version_rev is stale: read the profile again (GET /v1/me) and retry');
    }
    const sequence = Number.parseInt(profile.version_rev.split('-')[0] ?? '1', 10) || 1;
    const driverProfile = {
      ...profile,
      version_rev: `${sequence + 1}-${newSecret(6)}`,
      service_types: [...new Set(input.driver_profile.service_types ?? profile.service_types)],
    };
    let updated: UserRecord;
    try {
      updated = await updateUser(user, {
        ...defined({ phone_number: input.phone_number }),
        driver_profile: driverProfile,
      });
    } catch (error) {
      // Another request changed the user since it was read: judged again against what is current.
      if (isDomainError(error, 'conflict') && attempt < 3) continue;
      throw error;
    }
    await syncServiceTypes(user.id, user.org_id ?? null, driverProfile.service_types);
    return toUserView(updated).driver_profile;
  }
}

/**
 * X15: the driver's duty state. Setting the state the driver is already in writes nothing and keeps `since`. A
 * change by another request between the read and the write (an A21 edit, a toggle from a second device) is read
 * again, never answered 409: the request says what the state should be, whatever it was. The read is consistent, so
 * "already in that state" is never judged on a stale copy.
 */
export async function setDuty(caller: Caller, onDuty: boolean): Promise<{ on_duty: boolean; since: string }> {
  for (let attempt = 1; ; attempt++) {
    const user = await self(caller, { consistent: true });
    if (!user.driver_profile) throw forbidden('only drivers have a duty state');
    if (dutyOf(user).on_duty === onDuty) return dutyOf(user);
    const saved = await saveDriverDuty(user, onDuty);
    if (saved) return dutyOf(saved);
    if (attempt === 3) throw conflict('the account kept changing while the duty state was set; retry');
  }
}

/**
 * A22: needs the current password (400 at `user.user.current_password`). The new address is claimed in the same
 * transaction (a taken one is 409) and is unconfirmed until its owner confirms it (A3 + X8): nobody has shown yet that
 * it is theirs. The old address is told, through the outbox, in the same transaction.
 */
export async function updateTransporterEmail(
  caller: Caller,
  input: { email: string; current_password: string },
): Promise<{ confirm: boolean }> {
  const user = await self(caller);
  await requireCurrentPassword(user, input.current_password, 'user.user.current_password');
  if (input.email.toLowerCase() === user.email.toLowerCase()) {
    // The same mailbox (at most its spelling changes): still confirmed, nobody to tell.
    await updateUser(user, { email: input.email });
    return { confirm: false };
  }
  const notice = outboxMail(emailChangedMail(user.email, input.email));
  await updateUser(user, { email: input.email, confirmed_at: null }, [notice.put]);
  await deliverOutboxMail(notice);
  return { confirm: true };
}

/**
 * A24: only for merchants who registered themselves (X1). A password change needs the current password (400 at
 * `user.current_password`) and answers the caller's new session, as A12.
 */
export async function updateMerchant(
  caller: Caller,
  input: { name?: string | undefined; current_password?: string | undefined; password?: string | undefined },
): Promise<TokenPair | undefined> {
  const user = await self(caller);
  if (!user.self_registered || !user.roles.includes('Merchant')) {
    throw forbidden('only self-registered merchant accounts may set their name and password here');
  }
  const changes = defined({ name: input.name });
  if (input.password === undefined) {
    await updateUser(user, changes);
    return undefined;
  }
  await requireCurrentPassword(user, input.current_password, 'user.current_password');
  return changePassword(user, changes, input.password);
}
