// T3 POST /v1/admin/partner-authorizations
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { createPartner } from '#shared/tokens/partners';

export const handler = endpoint(tokensRoutes, 'T3', async ({ body, caller }) =>
  created(await createPartner(caller, body)),
);
