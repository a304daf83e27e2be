// X3 GET /v1/admin/organisations
import { listOrganisations } from '#shared/accounts/organisations';
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'X3', async ({ query }) => {
  const page = await listOrganisations(pageOf(query));
  return ok({ organisations: page.items, meta: page.meta });
});
