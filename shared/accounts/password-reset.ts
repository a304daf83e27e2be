/**
 * Forgotten passwords (A10, A11): a single-use reset token valid one hour, sent by mail.
 *
 * A10 answers the same for any address and does the same work for any address: it counts the request against the
 * address (at most RESET_MAIL_LIMIT mails per address in a fixed window of RESET_WINDOW_SECONDS; the requests beyond
 * are answered alike and mail nothing), reads the email claim and a user (the claimed one, or an id nobody has), and
 * writes one transaction that stamps the count (with the token and the user's new reset hash when a mail is due).
 * Only the mail itself is left to tell the two apart.
 */
import { sendPasswordReset } from '#shared/accounts/mails';
import { findUserByEmailEvenly, getUser, updateUser } from '#shared/accounts/users';
import { checkToken, issueToken } from '#shared/auth/one-time-tokens';
import { hashPassword } from '#shared/auth/passwords';
import { mainTableName, type TransactItem, transactWrite } from '#shared/db/client';
import { countInWindow } from '#shared/db/window-counter';
import { gone, isDomainError } from '#shared/errors';

export const RESET_MAIL_LIMIT = 3;
export const RESET_WINDOW_SECONDS = 15 * 60;

/** A10: the same answer, and the same reads and writes, whether or not the address has an account. */
export async function forgotPassword(email: string): Promise<void> {
  // Counted first and atomically: concurrent requests cannot all see a count below the limit.
  const { count, key } = await countInWindow(`reset#${email.trim().toLowerCase()}`, RESET_WINDOW_SECONDS);
  const withinLimit = count <= RESET_MAIL_LIMIT;
  const found = await findUserByEmailEvenly(email);
  const user = found && !found.deleted_at && withinLimit ? found : undefined;
  const stamp = (mailed: number): TransactItem => ({
    Update: {
      TableName: mainTableName(),
      Key: key,
      UpdateExpression: 'ADD mailed :mailed',
      ExpressionAttributeValues: { ':mailed': mailed },
    },
  });
  if (!user) {
    await transactWrite([stamp(0)]);
    return;
  }
  const issued = issueToken('password_reset', user.id, user.reset_token_hash);
  try {
    await updateUser(user, { reset_token_hash: issued.hash }, [...issued.items, stamp(1)]);
  } catch (error) {
    // A concurrent request changed the user first (and mails its own token): answered alike, without a 409 that an
    // unknown address never gets.
    if (isDomainError(error, 'conflict')) return;
    throw error;
  }
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
    if (isDomainError(error, 'conflict')) throw gone('this reset token was already used');
    throw error;
  }
}
