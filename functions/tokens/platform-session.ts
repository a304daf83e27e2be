// T10 POST /v1/auth/platform-sessions
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { createPlatformSession } from '#shared/tokens/platform-sessions';

export const handler = endpoint(tokensRoutes, 'T10', async ({ headers, body }) =>
  created(await createPlatformSession(headers['x-platform-id'], body.user.email, body.user.password)),
);
