/**
 * A typed client for the Dispatch API: openapi-fetch over the types generated from the OpenAPI document
 * (`lib/client/schema.ts`), so every path, parameter, body and reply is checked by the compiler.
 *
 *   const api = dispatchClient('http://localhost:3000');
 *   const { data } = await api.POST('/v1/auth/login', { body: { user: { email, password } } });
 *   api.signIn(data!.bearer_token);
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '#lib/client/schema';

export type { paths } from '#lib/client/schema';

export type DispatchClient = Client<paths> & {
  /** Sends this bearer token with every later call (`undefined`: none). */
  signIn(token: string | undefined): void;
};

export function dispatchClient(baseUrl: string): DispatchClient {
  let bearer: string | undefined;
  const client = createClient<paths>({ baseUrl });
  client.use({
    onRequest({ request }) {
      if (bearer) request.headers.set('authorization', `Bearer ${bearer}`);
      return request;
    },
  });
  return Object.assign(client, {
    signIn(token: string | undefined) {
      bearer = token;
    },
  });
}
