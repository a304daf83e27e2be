// A11 POST /v1/auth/password/reset
import { resetPassword } from '#shared/accounts/password-reset';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A11', async ({ body }) => {
  await resetPassword(body.user.reset_password_token, body.user.password);
  return ok({ message: 'the password is changed; log in again' });
});
