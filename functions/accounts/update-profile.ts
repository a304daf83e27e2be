// A13 PUT /v1/users/profile
import { updateProfile } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A13', async ({ body, caller }) => {
  await updateProfile(caller, body.user);
  return ok({ message: 'the profile is updated' });
});
