// X7 POST /v1/admin/clients
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { createInternalClient } from '#shared/tokens/partners';

export const handler = endpoint(tokensRoutes, 'X7', async ({ body, caller }) =>
  created(await createInternalClient(caller, body)),
);
