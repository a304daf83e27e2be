// A3 POST /v1/auth/security-code
import { requestSecurityCode } from '#shared/accounts/registration';
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';

export const handler = endpoint('A3', async ({ body }) => {
  await requestSecurityCode(body.user.email, body.user.phone_number);
  return accepted({ message: 'if the account exists and is not confirmed yet, a security code is on its way' });
});
