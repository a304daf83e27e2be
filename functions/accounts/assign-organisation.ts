// A25 POST /v1/admin/users/assign-organisation
import { assignOrganisation } from '#shared/accounts/directory';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A25', async ({ body }) => {
  await assignOrganisation(body.user.id, body.user.org_id);
  return success('the organisation is assigned');
});
