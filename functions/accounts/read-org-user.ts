// A23 GET /v1/org/users/{userID}
import { readOrganisationUser } from '#shared/accounts/directory';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A23', async ({ params, caller }) =>
  ok(await readOrganisationUser(caller, params.userID)),
);
