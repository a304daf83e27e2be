// T8 POST /v1/auth/auth-codes
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { createAuthCode } from '#shared/tokens/auth-codes';

export const handler = endpoint(tokensRoutes, 'T8', async ({ body, caller }) =>
  created(await createAuthCode(caller, body)),
);
