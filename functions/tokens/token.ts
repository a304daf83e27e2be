// X5 POST /v1/auth/token
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { grantToken } from '#shared/tokens/grants';

export const handler = endpoint(tokensRoutes, 'X5', async ({ headers, body, event }) =>
  ok(await grantToken(headers['authorization'], body, event.requestContext.http.sourceIp)),
);
