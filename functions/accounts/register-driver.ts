// A2 POST /v1/auth/register-driver
import { registerDriver } from '#shared/accounts/registration';
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A2', async ({ body }) => {
  const user = await registerDriver(body.user);
  return created({ message: 'registered: ask for a security code to confirm the account', user_id: user.id });
});
