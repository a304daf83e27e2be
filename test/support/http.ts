/**
 * A small HTTP client for end-to-end tests: JSON in, parsed body and headers out. Every response is checked against
 * the served OpenAPI document (test/support/conformance.ts).
 */
import { checkConformance } from './conformance.ts';

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

export function client(baseUrl: string) {
  async function call<T = Record<string, unknown>>(
    method: string,
    path: string,
    options: { token?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string | FormData } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers['authorization'] = `Bearer ${options.token}`;
    // A FormData body is sent as multipart/form-data, fetch choosing the boundary (I3's uploads).
    let body: string | FormData | undefined = options.rawBody;
    if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    await checkConformance(baseUrl, method, path, response.status, response.headers.get('content-type'), parsed);
    return { status: response.status, body: parsed as T, headers: response.headers };
  }
  return {
    call,
    get: <T = Record<string, unknown>>(path: string, token?: string) => call<T>('GET', path, { token }),
    post: <T = Record<string, unknown>>(
      path: string,
      body: unknown,
      token?: string,
      headers?: Record<string, string>,
    ) => call<T>('POST', path, { body, token, headers }),
    put: <T = Record<string, unknown>>(path: string, body: unknown, token?: string) =>
      call<T>('PUT', path, { body, token }),
    delete: <T = Record<string, unknown>>(path: string, body?: unknown, token?: string) =>
      call<T>('DELETE', path, { body, token }),
    /** A multipart/form-data POST (I3), checked like every other response. */
    upload: <T = Record<string, unknown>>(path: string, form: FormData, token?: string) =>
      call<T>('POST', path, { rawBody: form, token }),
  };
}

export type Client = ReturnType<typeof client>;

export async function loginAs(api: Client, email: string, password: string) {
  const response = await api.post<{ bearer_token: string; refresh_token: string; user: { id: string } }>(
    '/v1/auth/login',
    { user: { email, password } },
  );
  if (response.status !== 200)
    throw new Error(`login as ${email} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/**
 * A user of `role` in `orgId`, made the way a person would be: SysAdmin invites, the invitation from the local
 * outbox is accepted, the user logs in.
 */
export async function invitedMember(api: Client, adminToken: string, role: string, roleId: string, orgId: string) {
  const email = `${role.toLowerCase()}.${Math.random().toString(36).slice(2, 10)}@example.com`;
  const password = 'a-good-long-password';
  await api.post('/v1/admin/invitations', { user: { email, org_id: orgId, role_id: roleId } }, adminToken);
  const outbox = await api.get<{ messages: { data: Record<string, string> }[] }>(
    `/_local/outbox?to=${encodeURIComponent(email)}`,
  );
  const token = outbox.body.messages[0]?.data['invitation_token'];
  await api.post('/v1/auth/accept-invitation', { user: { name: `${role} User`, password, invitation_token: token } });
  const session = await loginAs(api, email, password);
  return { email, password, id: session.user.id, token: session.bearer_token, refresh_token: session.refresh_token };
}

/**
 * A freelance driver made the way one signs up: A2 registers, the security code from the local outbox verifies the
 * e-mail, the driver logs in (its session).
 */
export async function freelanceDriver(api: Client, prefix = 'freelance') {
  const email = `${prefix}.${Math.random().toString(36).slice(2, 8)}@example.com`;
  await api.post('/v1/auth/register-driver', { user: { email, password: 'a-good-long-password', name: 'Freelance' } });
  await api.post('/v1/auth/security-code', { user: { email } });
  const mail = await api.get<{ messages: { kind: string; data: Record<string, string> }[] }>(
    `/_local/outbox?to=${encodeURIComponent(email)}`,
  );
  const code = mail.body.messages.find((m) => m.kind === 'security_code')!.data['security_code'];
  await api.post('/v1/auth/verify-security-code', { user: { email, security_code: code } });
  return loginAs(api, email, 'a-good-long-password');
}

/** A new organisation (SysAdmin's X2), its id. */
export async function newOrganisation(api: Client, adminToken: string, name: string, kind = 'transporter') {
  return (await api.post<{ id: string }>('/v1/admin/organisations', { name, kind }, adminToken)).body.id;
}

/** A client's bearer token by T1 `client_credentials`, its key and secret as HTTP Basic credentials. */
export async function clientCredentialsToken(api: Client, clientKey: string, secretKey: string): Promise<string> {
  const basic = Buffer.from(`${clientKey}:${secretKey}`).toString('base64');
  const response = await api.call<{ bearer_token: string }>('POST', '/v1/auth/token', {
    headers: { authorization: `Basic ${basic}` },
    body: { grant_type: 'client_credentials' },
  });
  if (response.status !== 200)
    throw new Error(`client_credentials for ${clientKey} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.bearer_token;
}

/** An internal client with `roles` (SysAdmin's X7) and its bearer token: how a worker of the platform signs in. */
export async function internalClientToken(api: Client, adminToken: string, name: string, roles: string[]) {
  const created = await api.post<{ client_key: string; secret_key: string }>(
    '/v1/admin/clients',
    { name, roles },
    adminToken,
  );
  if (created.status !== 201) throw new Error(`X7 failed: ${created.status} ${JSON.stringify(created.body)}`);
  return clientCredentialsToken(api, created.body.client_key, created.body.secret_key);
}
