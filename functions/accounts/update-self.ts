// A20 PUT /v1/org/me
import { updateSelf } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A20', async ({ body, caller }) => {
  await updateSelf(caller, body.user);
  return success('the account is updated');
});
