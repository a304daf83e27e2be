/**
 * A typed client for the Dispatch API: openapi-fetch over the types generated from the OpenAPI document
 * (`lib/client/schema.ts`), so every path, parameter, body and reply is checked by the compiler.
 *
 *   const { data } = await dispatchClient(url).POST('/v1/auth/login', { body: { user: { email, password } } });
 *   const api = dispatchClient(url, data!.bearer_token);
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '#lib/client/schema';

export type { paths } from '#lib/client/schema';

export type DispatchClient = Client<paths>;

/** A client for `baseUrl` that sends `bearerToken` (if any) with every call. */
export function dispatchClient(baseUrl: string, bearerToken?: string): DispatchClient {
  return createClient<paths>({
    baseUrl,
    headers: bearerToken ? { authorization: `Bearer ${bearerToken}` } : {},
  });
}

/** The data of a call that succeeded; a failed call throws with its status and problem. */
export function must<T>(reply: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (reply.error !== undefined || reply.data === undefined) {
    throw new Error(`${what}: ${reply.response.status} ${JSON.stringify(reply.error)}`);
  }
  return reply.data;
}

/**
 * Local mode: an invited person joins as they would, reading the invitation from the mail outbox (`/_local/outbox`),
 * accepting it, and logging in. Returns the login reply.
 */
export async function joinFromOutbox(baseUrl: string, email: string, name: string, password: string) {
  const outbox = (await (await fetch(`${baseUrl}/_local/outbox?to=${encodeURIComponent(email)}`)).json()) as {
    messages: { data: Record<string, string> }[];
  };
  const anonymous = dispatchClient(baseUrl);
  const invitation_token = outbox.messages[0]?.data['invitation_token'] ?? '';
  must(
    await anonymous.POST('/v1/auth/accept-invitation', { body: { user: { name, password, invitation_token } } }),
    `accept the invitation of ${email}`,
  );
  return must(await anonymous.POST('/v1/auth/login', { body: { user: { email, password } } }), `log in as ${email}`);
}
