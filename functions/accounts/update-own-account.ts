// A12 PUT /v1/me/account
import { updateOwnAccount } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A12', async ({ body, caller }) => {
  const session = await updateOwnAccount(caller, body.user);
  return session
    ? ok({ message: 'the account is updated; every other session has ended: go on with this new one', ...session })
    : ok({ message: 'the account is updated' });
});
