/**
 * Issue 25.6 through the bundles as deployed (see bundles.test.ts for how they run): the login function issues
 * tokens, the authorizer verifies them and the rotation function rotates the signing-key secret in Secrets Manager's
 * four steps, against the stand-in Secrets Manager (versions and staging labels as the service keeps them). Each
 * driver run is a set of fresh containers; within a run a container stays warm (its key cache too). Time passing
 * between rotations is the stored key set's timestamps moved back, as the rotation reads them.
 * Tokens signed before, during and after a rotation all pass the authorizer.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type CfnElement, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DispatchFunction } from '../../lib/constructs/dispatch-function.ts';
import { ensureTables, LOCAL_CREDENTIALS } from '../../lib/local/emulators.ts';
import { authorizerEvent, proxyEvent } from '../../lib/local/events.ts';
import { DROP_AFTER_MS, type KeySet, PROMOTE_AFTER_MS } from '../../shared/auth/key-rotation.ts';
import { cloudAssembly, constructTree } from './assembly.ts';
import { lambdaNode } from './lambda-node.ts';
import { type StandIns, startStandIns } from './stand-ins.ts';

const NODE = lambdaNode();
const ADMIN_PASSWORD = 'bundle-rotation-admin-password';
const SECRET = (name: string) => `arn:aws:secretsmanager:us-east-1:123456789012:secret:${name}`;
const SIGNING = SECRET('SigningKeys');
const HANDLERS = ['system/seed-admin', 'auth/login', 'auth/authorizer', 'auth/rotate-signing-keys'] as const;
type Handler = (typeof HANDLERS)[number];

interface FunctionPlan {
  name: string;
  handler: string;
  handlerString: string;
  assetDir: string;
  timeoutMs: number;
  env: Record<string, string>;
}
interface Invocation {
  event: unknown;
  captureToken?: string;
}
interface Outcome {
  handler: string;
  invocations: { ok: boolean; status?: number; body?: string; error?: string }[];
}

let standIns: StandIns;
let functions: Map<Handler, FunctionPlan>;
let runtimeEnv: Record<string, string>;
let tokens: Record<string, string> = {};

beforeAll(async () => {
  const { outdir } = cloudAssembly();
  const { app } = constructTree();
  const endpoints = inject('endpoints');
  const tables = await ensureTables(endpoints.dynamodb, `r${randomBytes(4).toString('hex')}-`);
  standIns = await startStandIns({
    [SIGNING]: randomBytes(16).toString('hex'), // what CloudFormation leaves in a new secret
    [SECRET('PageTokenKey')]: randomBytes(32).toString('hex'),
    [SECRET('AdminPassword')]: ADMIN_PASSWORD,
  });
  const localValue: Record<string, string> = {
    ...tables,
    SIGNING_KEY_SECRET_ARN: SIGNING,
    ADMIN_PASSWORD_SECRET_ARN: SECRET('AdminPassword'),
  };
  type Resource = {
    Properties: {
      Handler: string;
      Timeout?: number;
      Code: { S3Key: string };
      Environment?: { Variables?: Record<string, unknown> };
    };
  };
  functions = new Map();
  for (const fn of app.node.findAll()) {
    if (!(fn instanceof DispatchFunction) || !(HANDLERS as readonly string[]).includes(fn.handlerPath)) continue;
    const stack = Stack.of(fn);
    const id = stack.getLogicalId(fn.node.defaultChild as CfnElement);
    const template = JSON.parse(readFileSync(join(outdir, stack.templateFile), 'utf8')) as {
      Resources: Record<string, Resource>;
    };
    const resource = template.Resources[id]!;
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(resource.Properties.Environment?.Variables ?? {})) {
      const resolved = typeof value === 'string' ? value : localValue[name];
      if (resolved === undefined) throw new Error(`${fn.handlerPath}: no local value for ${name}`);
      env[name] = resolved;
    }
    functions.set(fn.handlerPath as Handler, {
      name: id,
      handler: fn.handlerPath,
      handlerString: resource.Properties.Handler,
      assetDir: join(outdir, `asset.${resource.Properties.Code.S3Key.replace(/\.zip$/, '')}`),
      timeoutMs: Number(resource.Properties.Timeout ?? 3) * 1000,
      env,
    });
  }
  expect([...functions.keys()].sort()).toEqual([...HANDLERS].sort());
  runtimeEnv = {
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs',
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: standIns.url,
    TZ: 'UTC',
  };
}, 720_000);

afterAll(() => standIns?.stop());

/** One driver run: fresh containers, each step's function invoked in order (a function seen again is warm). */
async function run(steps: [Handler, Invocation[]][]): Promise<Outcome[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rotation-'));
  const plan = {
    timeoutMs: 10_000,
    runtimeEnv,
    tokens,
    functions: steps.map(([handler, invocations]) => ({ ...functions.get(handler)!, invocations })),
  };
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));
  await promisify(execFile)(
    NODE.path,
    [
      '--enable-source-maps',
      join(import.meta.dirname, 'driver.mjs'),
      join(dir, 'plan.json'),
      join(dir, 'results.json'),
    ],
    { timeout: 120_000, maxBuffer: 16 * 1024 * 1024, env: { PATH: process.env['PATH'] ?? '' } },
  );
  const result = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as {
    results: Outcome[];
    tokens: Record<string, string>;
  };
  tokens = result.tokens;
  for (const outcome of result.results) {
    for (const invocation of outcome.invocations) {
      expect(invocation, `${outcome.handler}: ${invocation.error ?? invocation.body}`).toMatchObject({ ok: true });
    }
  }
  return result.results;
}

const login = (name: string): Invocation => {
  const incoming = {
    method: 'POST',
    path: '/v1/auth/login',
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ user: { email: 'admin@dispatch.local', password: ADMIN_PASSWORD } })),
    routeKey: 'POST /v1/auth/login',
    pathParameters: {},
    sourceIp: '127.0.0.1',
  };
  return { event: proxyEvent(incoming, undefined), captureToken: name };
};
const authorize = (name: string): Invocation => ({
  event: authorizerEvent({
    method: 'GET',
    path: '/v1/accounts/me',
    rawQueryString: '',
    headers: { authorization: `Bearer $TOKEN_${name}` },
    body: Buffer.alloc(0),
    routeKey: 'GET /v1/accounts/me',
    pathParameters: {},
    sourceIp: '127.0.0.1',
  }),
});
/** Secrets Manager's rotation: it stages a version AWSPENDING, then invokes the function once per step. */
const rotation = (): Invocation[] => {
  const token = randomUUID();
  standIns.secrets.startRotation(SIGNING, token);
  return (['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const).map((Step) => ({
    event: { SecretId: SIGNING, ClientRequestToken: token, Step },
  }));
};
const keySet = () => JSON.parse(standIns.secrets.current(SIGNING)!) as KeySet;
const states = () => Object.fromEntries(keySet().keys.map((key) => [key.kid, key.state]));
const kidOf = (name: string) =>
  (JSON.parse(Buffer.from(tokens[name]!.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
/** Time passing, as the rotation sees it: every stored timestamp moved back. */
function elapse(ms: number) {
  const back = (iso: string | undefined) => (iso ? new Date(Date.parse(iso) - ms).toISOString() : iso);
  const set = keySet();
  standIns.secrets.setCurrent(
    SIGNING,
    JSON.stringify({
      keys: set.keys.map((key) => ({
        ...key,
        created_at: back(key.created_at),
        promoted_at: back(key.promoted_at),
        retired_at: back(key.retired_at),
      })),
    }),
  );
}
/** The authorizer's answers of a run, in order: 'true' when it passed the token. */
const verdicts = (outcomes: Outcome[]) =>
  outcomes
    .filter((outcome) => outcome.handler === 'auth/authorizer')
    .flatMap((outcome) => outcome.invocations)
    .map(
      (invocation) => (JSON.parse(invocation.body!) as { context: { authenticated: string } }).context.authenticated,
    );

describe('signing-key rotation through the bundles (issue 25.6)', () => {
  it('tokens signed before, during and after a rotation all pass the authorizer', async () => {
    // Before: a fresh deployment; the first login fills the secret with one signing key.
    const before = await run([
      ['system/seed-admin', [{ event: {} }]],
      ['auth/login', [login('before')]],
      ['auth/authorizer', [authorize('before')]],
    ]);
    expect(verdicts(before)).toEqual(['true']);
    const k1 = kidOf('before');
    expect(states()).toEqual({ [k1]: 'current' });

    // During: the first scheduled rotation lists k2, verify-only; logins still sign with k1.
    const during = await run([
      ['auth/authorizer', [authorize('before')]],
      ['auth/rotate-signing-keys', rotation()],
      ['auth/login', [login('during')]],
      ['auth/authorizer', [authorize('during'), authorize('before')]],
    ]);
    expect(kidOf('during')).toBe(k1);
    const listed = states();
    const k2 = Object.keys(listed).find((kid) => kid !== k1)!;
    expect(listed).toEqual({ [k1]: 'current', [k2]: 'next' });
    expect(verdicts(during)).toEqual(['true', 'true', 'true']);
    // Rotated again at once (a retry, a manual rotation): k2 is not promoted before every cache can hold it.
    await run([['auth/rotate-signing-keys', rotation()]]);
    expect(states()).toEqual(listed);

    // After: a cache period later the next rotation promotes k2 and retires k1. The authorizer read the key set
    // before the promotion and is still warm: it verifies k2's tokens, since k2 was listed when it read the set.
    elapse(PROMOTE_AFTER_MS);
    const after = await run([
      ['auth/authorizer', [authorize('during')]],
      ['auth/rotate-signing-keys', rotation()],
      ['auth/login', [login('after')]],
      ['auth/authorizer', [authorize('after'), authorize('before'), authorize('during')]],
    ]);
    expect(kidOf('after')).toBe(k2);
    const promoted = states();
    expect(promoted[k2]).toBe('current');
    expect(promoted[k1]).toBe('previous');
    expect(verdicts(after)).toEqual(['true', 'true', 'true', 'true']);
    // New containers too: every token passes.
    const fresh = await run([['auth/authorizer', [authorize('before'), authorize('during'), authorize('after')]]]);
    expect(verdicts(fresh)).toEqual(['true', 'true', 'true']);

    // Once every token k1 can have signed has expired, the next rotation drops it; k2's tokens still pass.
    elapse(DROP_AFTER_MS);
    const dropped = await run([
      ['auth/rotate-signing-keys', rotation()],
      ['auth/authorizer', [authorize('after'), authorize('before')]],
    ]);
    expect(Object.keys(states())).not.toContain(k1);
    // The same rotation promoted the key listed at the previous one (listed longer than a cache period): k2 verifies
    // only now, and signs no more.
    const last = states();
    expect(last[k2]).toBe('previous');
    expect(Object.values(last).filter((state) => state === 'current')).toHaveLength(1);
    // A k1 token would have expired by now in real time; here it is still young, and is refused: k1 is gone.
    expect(verdicts(dropped)).toEqual(['true', 'false']);
    expect(standIns.calls).toEqual(
      expect.arrayContaining(['secretsmanager.DescribeSecret', 'secretsmanager.UpdateSecretVersionStage']),
    );
  }, 600_000);
});
