// A6 POST /v1/org-transporter/invitations
import { invite } from '#shared/accounts/invitations';
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A6', async ({ body, caller }) => {
  await invite(caller, 'orgTransporter', { email: body.user.email, roleId: body.user.role_id });
  return created({ status: 'invited' });
});
