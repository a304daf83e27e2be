// GET /.well-known/jwks.json (public, cacheable)
import { signingKeys } from '#shared/auth/keys';
import { endpoint } from '#shared/http/endpoint';
import { authRoutes } from '#shared/routes/auth';

export const handler = endpoint(authRoutes, 'JWKS', async () => ({
  status: 200,
  body: { keys: (await signingKeys()).publicJwks },
  headers: { 'Cache-Control': 'public, max-age=300' },
}));
