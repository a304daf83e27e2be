import { findUserByEmail, toUserView, type UserRecord } from '#shared/accounts/users';
import { verifyPassword } from '#shared/auth/passwords';
import { startSession, type TokenPair } from '#shared/auth/sessions';
import { clearLoginFailures, countLoginAttempt } from '#shared/auth/throttle';
import { forbidden, unauthenticated } from '#shared/errors';

/** A1. */
export async function login(
  email: string,
  password: string,
): Promise<TokenPair & { user: ReturnType<typeof toUserView> }> {
  const user = await verifyCredentials(email, password);
  return { ...(await startSession(user)), user: toUserView(user) };
}

/**
 * Email and password → the confirmed, live account (A1, T10). An unknown email and a wrong password get the same
 * 401 after the same amount of work; only a caller who knows the password learns that the account is unconfirmed.
 * Every attempt is counted before its password is checked; beyond the limit it is a 429 for a while, unchecked
 * (shared/auth/throttle.ts).
 */
export async function verifyCredentials(email: string, password: string): Promise<UserRecord> {
  const [, user] = await Promise.all([countLoginAttempt(email), findUserByEmail(email)]);
  const valid = await verifyPassword(password, user && !user.deleted_at ? user.password_hash : undefined);
  if (!user || !valid || user.deleted_at) throw unauthenticated();
  await clearLoginFailures(email);
  if (!user.confirmed_at) throw forbidden('the account is not confirmed yet', 'account_not_confirmed');
  return user;
}
