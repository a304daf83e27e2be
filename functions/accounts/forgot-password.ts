// A10 POST /v1/auth/password/forgot
import { forgotPassword } from '#shared/accounts/password-reset';
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A10', async ({ body }) => {
  await forgotPassword(body.user.email);
  return accepted({ message: 'if the address has an account, a reset link is on its way' });
});
