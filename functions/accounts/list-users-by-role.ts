// A15 GET /v1/admin/users/by-role
import { listUsersByRole } from '#shared/accounts/directory';
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A15', async ({ query }) =>
  ok(
    await listUsersByRole(
      { orgId: query.org_id, role: query.role_name, sortBy: query.sort_by, order: query.order },
      pageOf(query),
    ),
  ),
);
