// A8 POST /v1/admin/invitations/bulk
import { bulkInvite } from '#shared/accounts/invitations';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A8', async ({ body, caller }) =>
  ok(await bulkInvite(caller, body.user.emails, body.user.org_id, body.user.role_id)),
);
