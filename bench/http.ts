/** The benches' one HTTP call against a host: a bearer token, a JSON body when given, the JSON answer. */
export type Json = Record<string, unknown>;

/**
 * One request; no answer at all (a connection reset on a busy host, as a phone sees one) is status 0 with the
 * network error's message.
 */
export async function call(
  base: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Json };
  } catch (error) {
    return { status: 0, body: { network_error: (error as Error).message } };
  }
}
