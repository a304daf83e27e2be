// X2 POST /v1/admin/organisations
import { createOrganisation } from '#shared/accounts/organisations';
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'X2', async ({ body }) => created(await createOrganisation(body)));
