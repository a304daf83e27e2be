// A1 POST /v1/auth/login
import { login } from '#shared/accounts/login';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { authRoutes } from '#shared/routes/auth';

export const handler = endpoint(authRoutes, 'A1', async ({ body }) =>
  ok(await login(body.user.email, body.user.password)),
);
