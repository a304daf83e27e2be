// A26 POST /v1/admin/users/{userID}/confirm
import { confirmUser } from '#shared/accounts/directory';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A26', async ({ params }) => {
  await confirmUser(params.userID);
  return success('the user is confirmed');
});
