// T9 GET /v1/admin/auth-codes/{auth_code}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { readAuthCode } from '#shared/tokens/auth-codes';

export const handler = endpoint(tokensRoutes, 'T9', async ({ params }) => ok(await readAuthCode(params.auth_code)));
