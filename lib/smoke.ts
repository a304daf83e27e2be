/**
 * `npm run smoke -- --url https://…`: a short end-to-end story against a deployed API (or a local host), step by
 * step, saying what works. It reads and creates only what a first user would: the public keys, a login, the
 * roles, the caller's own account, one organisation, one 404. Nothing is asserted beyond each step's answer.
 */
export interface SmokeOptions {
  url: string;
  email: string;
  password: string;
  log?: (line: string) => void;
}

export interface SmokeStep {
  name: string;
  ok: boolean;
  detail: string;
}

export async function runSmoke(options: SmokeOptions): Promise<SmokeStep[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  const base = options.url.replace(/\/$/, '');
  const steps: SmokeStep[] = [];
  let token = '';
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {}
    return { status: response.status, type: response.headers.get('content-type') ?? '', json };
  };
  const step = async (name: string, run: () => Promise<string>) => {
    try {
      const detail = await run();
      steps.push({ name, ok: true, detail });
      log(`ok    ${name}: ${detail}`);
    } catch (error) {
      const detail = (error as Error).message;
      steps.push({ name, ok: false, detail });
      log(`FAIL  ${name}: ${detail}`);
    }
  };
  const expectStatus = (actual: number, wanted: number, what: string) => {
    if (actual !== wanted) throw new Error(`${what} answered ${actual}, expected ${wanted}`);
  };

  await step('public keys (JWKS, signing-key secret)', async () => {
    const out = await call('GET', '/.well-known/jwks.json');
    expectStatus(out.status, 200, 'GET /.well-known/jwks.json');
    return `${(out.json['keys'] as unknown[]).length} key(s)`;
  });
  await step('login (A1: main table, argon2id, signing)', async () => {
    const out = await call('POST', '/v1/auth/login', { user: { email: options.email, password: options.password } });
    expectStatus(out.status, 200, 'POST /v1/auth/login');
    token = String(out.json['bearer_token']);
    return 'bearer token issued';
  });
  await step('authorizer and own account (X9)', async () => {
    const out = await call('GET', '/v1/me');
    expectStatus(out.status, 200, 'GET /v1/me');
    return String((out.json['user'] as Record<string, unknown> | undefined)?.['email'] ?? 'ok');
  });
  await step('roles (X4)', async () => {
    const out = await call('GET', '/v1/roles');
    expectStatus(out.status, 200, 'GET /v1/roles');
    return `${(out.json['roles'] as unknown[]).length} roles`;
  });
  await step('create an organisation (X2: a write, idempotency table)', async () => {
    const response = await call('POST', '/v1/admin/organisations', {
      name: `Smoke test ${new Date().toISOString()}`,
      kind: 'merchant',
    });
    expectStatus(response.status, 201, 'POST /v1/admin/organisations');
    return String(response.json['id']);
  });
  await step('list organisations (X3: an index query)', async () => {
    const out = await call('GET', '/v1/admin/organisations');
    expectStatus(out.status, 200, 'GET /v1/admin/organisations');
    return `${(out.json['organisations'] as unknown[]).length} on the first page`;
  });
  await step('no such path answers problem+json 404 ($default)', async () => {
    const out = await call('GET', '/v1/no-such-operation');
    expectStatus(out.status, 404, 'GET /v1/no-such-operation');
    if (!out.type.startsWith('application/problem+json')) throw new Error(`content type ${out.type}`);
    return 'problem+json';
  });
  const failed = steps.filter((s) => !s.ok).length;
  log(failed === 0 ? `all ${steps.length} steps work` : `${failed} of ${steps.length} steps failed`);
  return steps;
}
