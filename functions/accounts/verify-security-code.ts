// X8 POST /v1/auth/verify-security-code
import { verifySecurityCode } from '#shared/accounts/registration';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'X8', async ({ body }) => {
  await verifySecurityCode(body.user.email, body.user.security_code);
  return ok({ message: 'the account is confirmed' });
});
