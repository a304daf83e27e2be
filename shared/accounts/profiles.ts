/** Changes users make to themselves (A12, A20–A22, A24, X9) and the profile edit of A13. */
import { findVisibleUser } from '#shared/accounts/directory';
import { getUser, toUserView, type UserRecord, updateUser } from '#shared/accounts/users';
import type { Caller } from '#shared/auth/caller';
import { hashPassword, verifyPassword } from '#shared/auth/passwords';
import { conflict, forbidden, invalidField, notFound } from '#shared/http/problems';
import { newSecret } from '#shared/ids';
import { syncServiceTypes } from '#shared/locations/locations';

async function self(caller: Caller): Promise<UserRecord> {
  const user = await getUser(caller.id);
  if (!user || user.deleted_at) throw notFound('user');
  return user;
}

const defined = <T extends object>(changes: T) =>
  Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<UserRecord>;

/** X9. */
export async function me(caller: Caller) {
  return { user: toUserView(await self(caller)) };
}

/** A12: a new password needs the current one (a wrong one is 400 at `user.current_password`). */
export async function updateOwnAccount(
  caller: Caller,
  input: { name?: string | undefined; current_password?: string | undefined; password?: string | undefined },
): Promise<void> {
  const user = await self(caller);
  const changes: Partial<UserRecord> = defined({ name: input.name });
  if (input.password !== undefined) {
    if (!(await verifyPassword(input.current_password ?? '', user.password_hash))) {
      throw invalidField('user.current_password', 'is not your current password');
    }
    changes.password_hash = await hashPassword(input.password);
  }
  await updateUser(user, changes);
}

/** A13: SysAdmin any user, OrgAdmin users of the own organisation. */
export async function updateProfile(
  caller: Caller,
  input: { id: string; name?: string | undefined; phone_number?: number | null | undefined },
): Promise<void> {
  // The id is in the body: one that names no user the caller may see is a bad input (400), not a missing resource.
  const user = await findVisibleUser(caller, input.id).catch((error: unknown) => {
    if ((error as { status?: number }).status === 404) throw invalidField('user.id', 'names no user you can edit');
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

/** A21: optimistic on `driver_profile.version_rev`; a stale one is 409, a successful change issues the next. */
export async function updateDriver(
  caller: Caller,
  input: {
    phone_number?: number | null | undefined;
    driver_profile: { version_rev: string; service_types?: string[] | undefined };
  },
) {
  const user = await self(caller);
  const profile = user.driver_profile;
  if (!profile) throw forbidden('only drivers have a driver profile');
  if (profile.version_rev !== input.driver_profile.version_rev) {
    throw conflict('driver_profile.version_rev is stale: read the profile again (GET /v1/me) and retry');
  }
  const sequence = Number.parseInt(profile.version_rev.split('-')[0] ?? '1', 10) || 1;
  const driverProfile = {
    version_rev: `${sequence + 1}-${newSecret(6)}`,
    service_types: [...new Set(input.driver_profile.service_types ?? profile.service_types)],
  };
  await updateUser(user, { ...defined({ phone_number: input.phone_number }), driver_profile: driverProfile });
  await syncServiceTypes(user.id, driverProfile.service_types);
  return driverProfile;
}

/** A22: the new address is claimed in the same transaction; a taken one is 409. */
export async function updateTransporterEmail(caller: Caller, email: string): Promise<void> {
  await updateUser(await self(caller), { email });
}

/** A24: only for merchants who registered themselves (X1). */
export async function updateMerchant(
  caller: Caller,
  input: { name?: string | undefined; password?: string | undefined },
): Promise<void> {
  const user = await self(caller);
  if (!user.self_registered || !user.roles.includes('Merchant')) {
    throw forbidden('only self-registered merchant accounts may set their name and password here');
  }
  const changes = defined({ name: input.name });
  if (input.password !== undefined) changes.password_hash = await hashPassword(input.password);
  await updateUser(user, changes);
}
