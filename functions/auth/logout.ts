// X6 POST /v1/auth/logout
import { logout } from '#shared/auth/sessions';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { authRoutes } from '#shared/routes/auth';

export const handler = endpoint(authRoutes, 'X6', async ({ body, caller }) => {
  await logout(caller, body.refresh_token);
  return success(body.refresh_token === undefined ? 'signed out everywhere' : 'signed out');
});
