// A18 GET /v1/admin/users/by-email/{email}
import { readUserByEmail } from '#shared/accounts/directory';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A18', async ({ params }) => ok(await readUserByEmail(params.email)));
