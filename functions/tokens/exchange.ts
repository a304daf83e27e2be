// T2 POST /v1/auth/exchange
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { exchangeExternalToken } from '#shared/tokens/exchange';

export const handler = endpoint(tokensRoutes, 'T2', async ({ headers }) =>
  ok(await exchangeExternalToken(headers['authorization'])),
);
