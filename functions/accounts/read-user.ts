// A16 GET /v1/admin/users/{userID}
import { readUser } from '#shared/accounts/directory';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A16', async ({ params }) => ok(await readUser(params.userID)));
