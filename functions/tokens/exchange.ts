// T2 POST /v1/auth/exchange
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { exchangeExternalToken } from '#shared/tokens/exchange';

export const handler = endpoint('T2', async ({ headers }) => ok(await exchangeExternalToken(headers['authorization'])));
