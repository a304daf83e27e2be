// A4 POST /v1/auth/accept-invitation
import { acceptInvitation } from '#shared/accounts/invitations';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A4', async ({ body }) => {
  await acceptInvitation(body.user.invitation_token, body.user.name, body.user.password);
  return ok({ status: 'accepted' });
});
