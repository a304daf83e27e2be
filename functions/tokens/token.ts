// X5 POST /v1/auth/token
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { grantToken } from '#shared/tokens/grants';

export const handler = endpoint('X5', async ({ headers, body }) =>
  ok(await grantToken(headers['authorization'], body)),
);
