// Runs deployed bundles as Lambda would, under the Node binary of the stacks' runtime (started by bundles.test.ts):
// each function's own module file and handler export from its handler string, with only its template's
// environment (plus what the Lambda runtime sets), one invocation after another. Plain JavaScript: no TypeScript
// loader exists in Lambda either. Reads a plan (JSON) and writes results (JSON) to the files it is given.

import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [planFile, resultFile] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(planFile, 'utf8'));
const results = [];
// `$TOKEN` in an event is the token captured last with `captureToken: true`; `$TOKEN_name` the one captured with
// `captureToken: 'name'` (this run's, or handed in by the plan's `tokens` from an earlier run).
const tokens = { ...(plan.tokens ?? {}) };
let token = '';
const verbose = Boolean(process.env.BUNDLES_VERBOSE);

const context = (name, timeoutMs = 29_000) => {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'bundle-test',
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done() {},
    fail() {},
    succeed() {},
  };
};

const withToken = (value) =>
  JSON.parse(
    JSON.stringify(value)
      .replace(/\$TOKEN_(\w+)/g, (_match, name) => tokens[name] ?? '')
      .replaceAll('$TOKEN', token),
  );

/** Environment as the function sees it: its template's, the runtime's; reads of anything unset are noted. */
function useEnvironment(variables, unset) {
  const target = { ...variables };
  process.env = new Proxy(target, {
    get(object, key) {
      if (typeof key === 'string' && !(key in object)) unset.add(key);
      return object[key];
    },
    has(object, key) {
      if (typeof key === 'string' && !(key in object)) unset.add(key);
      return key in object;
    },
  });
}

async function load(fn) {
  const [file, exported] = fn.handlerString.split('.');
  const candidates = ['.mjs', '.js', '.cjs'].map((ext) => join(fn.assetDir, `${file}${ext}`));
  const path = candidates.find((candidate) => existsSync(candidate));
  if (!path) throw new Error(`no module ${file} in ${fn.assetDir}`);
  const module = await import(pathToFileURL(path).href);
  if (typeof module[exported] !== 'function') throw new Error(`${path} exports no ${exported}`);
  return module[exported];
}

const loaded = new Map();
async function run(fn, event) {
  const unset = new Set();
  useEnvironment(
    { ...plan.runtimeEnv, ...fn.env, AWS_LAMBDA_FUNCTION_NAME: fn.name, LAMBDA_TASK_ROOT: fn.assetDir },
    unset,
  );
  if (!loaded.has(fn.name)) loaded.set(fn.name, await load(fn));
  const handler = loaded.get(fn.name);
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${plan.timeoutMs} ms`)), plan.timeoutMs);
  });
  try {
    return { value: await Promise.race([handler(withToken(event), context(fn.name, fn.timeoutMs)), timeout]), unset };
  } finally {
    clearTimeout(timer);
  }
}

for (const fn of plan.functions) {
  const outcome = { handler: fn.handler, name: fn.name, invocations: [], unset: [] };
  const unsetAll = new Set();
  for (const invocation of fn.invocations) {
    const started = Date.now();
    try {
      let event = invocation.event;
      if (invocation.authorize) {
        const authorizer = await run(plan.authorizer, invocation.authorizerEvent);
        for (const key of authorizer.unset) unsetAll.add(`authorizer:${key}`);
        event = {
          ...event,
          requestContext: { ...event.requestContext, authorizer: { lambda: authorizer.value.context } },
        };
      }
      const { value, unset } = await run(fn, event);
      for (const key of unset) unsetAll.add(key);
      if (invocation.captureToken) {
        const captured = JSON.parse(value.body).bearer_token ?? '';
        if (invocation.captureToken === true) token = captured;
        else tokens[invocation.captureToken] = captured;
      }
      outcome.invocations.push({
        ok: true,
        status: value?.statusCode,
        body: typeof value?.body === 'string' ? value.body.slice(0, 300) : JSON.stringify(value ?? null).slice(0, 300),
        ms: Date.now() - started,
      });
    } catch (error) {
      outcome.invocations.push({
        ok: false,
        error: `${error?.name}: ${error?.message}`.slice(0, 500),
        ms: Date.now() - started,
      });
    }
  }
  outcome.unset = [...unsetAll].sort();
  if (verbose) console.error(fn.handler, JSON.stringify(outcome.invocations));
  results.push(outcome);
}
process.env = {};
writeFileSync(resultFile, JSON.stringify({ node: process.version, results, tokens }));
process.exit(0);
