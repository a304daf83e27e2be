// A1 POST /v1/auth/login
import { login } from '#shared/accounts/login';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';

export const handler = endpoint('A1', async ({ body }) => ok(await login(body.user.email, body.user.password)));
