// X1 POST /v1/auth/register-merchant
import { registerMerchant } from '#shared/accounts/registration';
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'X1', async ({ body }) => {
  const user = await registerMerchant(body.user);
  return created({
    message: 'registered: ask for a security code to confirm the account',
    user_id: user.id,
    org_id: user.org_id,
  });
});
