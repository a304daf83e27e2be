/** Forgotten passwords (A10, A11): a single-use reset token valid one hour, sent by mail. */
import { sendPasswordReset } from '#shared/accounts/mails';
import { findUserByEmail, getUser, updateUser } from '#shared/accounts/users';
import { checkToken, issueToken } from '#shared/auth/one-time-tokens';
import { hashPassword } from '#shared/auth/passwords';
import { gone, Problem } from '#shared/http/problems';

/** A10: the same answer whether or not the address has an account. */
export async function forgotPassword(email: string): Promise<void> {
  const user = await findUserByEmail(email);
  if (!user || user.deleted_at) return;
  const issued = issueToken('password_reset', user.id, user.reset_token_hash);
  await updateUser(user, { reset_token_hash: issued.hash }, issued.items);
  await sendPasswordReset(user.email, issued.token);
}

/** A11: the new password takes effect and every session of the user ends (the token generation moves on). */
export async function resetPassword(token: string, password: string): Promise<void> {
  const redeemable = await checkToken('password_reset', token, 'user.reset_password_token');
  const user = await getUser(redeemable.userId);
  if (user && !user.deleted_at && redeemable.usedByThisRequest) return;
  if (!user || user.deleted_at || user.reset_token_hash !== redeemable.hash)
    throw gone('this reset token is no longer valid');
  try {
    await updateUser(
      user,
      { password_hash: await hashPassword(password), reset_token_hash: null, token_gen: user.token_gen + 1 },
      [redeemable.useItem],
    );
  } catch (error) {
    if (error instanceof Problem && error.status === 409) throw gone('this reset token was already used');
    throw error;
  }
}
