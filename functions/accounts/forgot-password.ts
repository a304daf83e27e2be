// A10 POST /v1/auth/password/forgot
import { forgotPassword } from '#shared/accounts/password-reset';
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';

export const handler = endpoint('A10', async ({ body }) => {
  await forgotPassword(body.user.email);
  return accepted({ message: 'if the address has an account, a reset link is on its way' });
});
