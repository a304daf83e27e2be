// X4 GET /v1/roles
import { ROLE_NAMES, ROLES } from '#shared/auth/roles';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

const roles = ROLE_NAMES.map((name) => ({ id: ROLES[name], name }));

export const handler = endpoint(accountsRoutes, 'X4', async () => ok({ roles }));
