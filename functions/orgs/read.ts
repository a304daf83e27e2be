// X3 GET /v1/admin/organisations/{orgID}
import { getOrganisation } from '#shared/accounts/organisations';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'X3.read', async ({ params }) =>
  ok(await getOrganisation(params.orgID)),
);
