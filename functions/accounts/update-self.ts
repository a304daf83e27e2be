// A20 PUT /v1/org/me
import { updateSelf } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';

export const handler = endpoint('A20', async ({ body, caller }) => {
  await updateSelf(caller, body.user);
  return success('the account is updated');
});
