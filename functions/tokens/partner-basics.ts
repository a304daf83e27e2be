// T7 GET /v1/partners/{client_key}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { partnerBasics } from '#shared/tokens/partners';

export const handler = endpoint(tokensRoutes, 'T7', async ({ params }) => ok(await partnerBasics(params.client_key)));
