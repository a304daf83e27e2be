// T5 PUT /v1/admin/partner-authorizations/{partnerAuthorizationID}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { updatePartner } from '#shared/tokens/partners';

export const handler = endpoint(tokensRoutes, 'T5', async ({ params, body, caller }) =>
  ok(await updatePartner(caller, params.partnerAuthorizationID, body)),
);
