// A14 GET /v1/admin/users
import { listUsers } from '#shared/accounts/directory';
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A14', async ({ query }) =>
  ok(await listUsers({ orgId: query.org_id, search: query.search }, pageOf(query))),
);
