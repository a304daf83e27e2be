// A3 POST /v1/auth/security-code
import { requestSecurityCode } from '#shared/accounts/registration';
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A3', async ({ body }) => {
  await requestSecurityCode(body.user.email, body.user.phone_number);
  return accepted({ message: 'if the account exists and is not confirmed yet, a security code is on its way' });
});
