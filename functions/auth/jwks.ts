// GET /.well-known/jwks.json (public, cacheable)
import { signingKeys } from '#shared/auth/keys';
import { endpoint } from '#shared/http/endpoint';

export const handler = endpoint('JWKS', async () => ({
  status: 200,
  body: { keys: (await signingKeys()).publicJwks },
  headers: { 'Cache-Control': 'public, max-age=300' },
}));
