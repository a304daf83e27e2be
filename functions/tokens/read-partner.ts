// T6 GET /v1/admin/partner-authorizations/{partnerAuthorizationID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { readPartner } from '#shared/tokens/partners';

export const handler = endpoint(tokensRoutes, 'T6', async ({ params }) =>
  ok(await readPartner(params.partnerAuthorizationID)),
);
