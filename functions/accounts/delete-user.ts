// A17 DELETE /v1/admin/users
import { deleteUser } from '#shared/accounts/directory';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A17', async ({ body }) => {
  await deleteUser(body.user.email);
  return success('the user is deleted');
});
