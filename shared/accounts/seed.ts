import { createUser, findUserByEmail, type UserRecord } from '#shared/accounts/users';
import { hashPassword } from '#shared/auth/passwords';
import { clock } from '#shared/clock';
import { isDomainError } from '#shared/errors';

/** Creates the first SysAdmin from configuration when no account holds that email yet. Safe to run at every start. */
export async function ensureSysAdmin(email: string, password: string): Promise<UserRecord> {
  const existing = await findUserByEmail(email);
  if (existing) return existing;
  try {
    return await createUser({
      email,
      name: 'System Administrator',
      roles: ['SysAdmin'],
      password_hash: await hashPassword(password),
      confirmed_at: clock.nowIso(),
    });
  } catch (error) {
    // Another starter won the race: theirs stands.
    if (isDomainError(error, 'conflict')) return (await findUserByEmail(email))!;
    throw error;
  }
}
