// X7.list GET /v1/admin/clients
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { listInternalClients } from '#shared/tokens/partners';

export const handler = endpoint(tokensRoutes, 'X7.list', async () => ok(await listInternalClients()));
