// X9 GET /v1/me
import { me } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'X9', async ({ caller }) => ok(await me(caller)));
