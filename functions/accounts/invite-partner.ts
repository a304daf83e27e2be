// A9 POST /v1/partner/invitations
import { invite } from '#shared/accounts/invitations';
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A9', async ({ body, caller }) => {
  await invite(caller, 'partner', { email: body.user.email, roleId: body.user.role_id, orgId: body.user.org_id });
  return created({ status: 'invited' });
});
