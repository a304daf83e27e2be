// A5 POST /v1/org-admin/invitations
import { invite } from '#shared/accounts/invitations';
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A5', async ({ body, caller }) => {
  await invite(caller, 'orgAdmin', { email: body.user.email, roleId: body.user.role_id });
  return created({ status: 'invited' });
});
