// A19 GET /v1/org/users
import { listOrganisationUsers } from '#shared/accounts/directory';
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A19', async ({ query, caller }) =>
  ok(await listOrganisationUsers(caller, pageOf(query))),
);
