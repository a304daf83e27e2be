// A7 POST /v1/admin/invitations
import { invite } from '#shared/accounts/invitations';
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A7', async ({ body, caller }) => {
  await invite(caller, 'sysAdmin', { email: body.user.email, roleId: body.user.role_id, orgId: body.user.org_id });
  return created({ status: 'invited' });
});
