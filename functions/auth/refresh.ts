// T1 POST /v1/auth/refresh
import { rotateRefreshToken } from '#shared/auth/sessions';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { authRoutes } from '#shared/routes/auth';

export const handler = endpoint(authRoutes, 'T1', async ({ body }) => ok(await rotateRefreshToken(body.refresh_token)));
