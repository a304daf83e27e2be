// A24 PUT /v1/merchant/me
import { updateMerchant } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A24', async ({ body, caller }) => {
  const session = await updateMerchant(caller, body.user);
  return session
    ? success('the account is updated; every other session has ended: go on with this new one', { ...session })
    : success('the account is updated');
});
