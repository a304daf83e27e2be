// A9 POST /v1/partner/invitations
import { invite } from '#shared/accounts/invitations';
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';

export const handler = endpoint('A9', async ({ body, caller }) => {
  await invite(caller, 'partner', { email: body.user.email, roleId: body.user.role_id, orgId: body.user.org_id });
  return created({ status: 'invited' });
});
