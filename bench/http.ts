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

/**
 * An organisation and its planner made through the domain (not the API: the benches measure what comes after), and
 * a bearer token for any of its users. Imported late, as the benches' hosts set the environment first.
 */
export async function benchOrganisation(name: string) {
  const { createOrganisation } = await import('#shared/accounts/organisations');
  const { createUser, currentTokenGeneration } = await import('#shared/accounts/users');
  const { issueBearerToken } = await import('#shared/auth/tokens');
  const org = await createOrganisation({ name, kind: 'transporter' });
  const tokenFor = async (id: string, roles: ('OrgAdmin' | 'OrgDriver')[]) =>
    (await issueBearerToken({ kind: 'user', id, roles, orgId: org.id }, (await currentTokenGeneration(id)) ?? 1))
      .bearer_token;
  const plannerUser = await createUser({
    email: `planner.${org.id.slice(0, 8)}@bench.example`,
    name: 'Planner',
    roles: ['OrgAdmin'],
    org_id: org.id,
    confirmed_at: new Date().toISOString(),
  });
  return { org, tokenFor, plannerUser };
}
