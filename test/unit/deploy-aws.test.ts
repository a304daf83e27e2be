/**
 * Issue 35: the deploy script's look-ups (lib/deploy-aws.ts) and the script itself (bin/deploy.ts), with SES
 * answered by aws-sdk-client-mock or a local stand-in and the AWS CLI by a fake `aws` on PATH that records its calls:
 * every check runs before any CloudFormation change, and a missing piece stops the deploy with one message. And the
 * bootstrap of item 1: run where the script runs it, the real CDK CLI goes straight to bootstrapping, without
 * synthesizing the app (which refuses to start without the deploy's context).
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetEmailIdentityCommand, NotFoundException, SESv2Client } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bootstrapInvocation,
  bootstrapStatus,
  callerAccount,
  concurrencyQuota,
  deployEnv,
  deployedStage,
  REPO_ROOT,
  sesIdentity,
} from '../../lib/deploy-aws.ts';
import { alarmEmailCheck } from '../../lib/deploy-checks.ts';

const run = promisify(execFile);

/** A fake AWS CLI v2: answers from environment variables and appends each call to $FAKE_AWS_LOG. */
const FAKE_AWS = `#!/bin/sh
echo "$*" >> "$FAKE_AWS_LOG"
case "$1 $2" in
  "sts get-caller-identity") echo 123456789012 ;;
  "configure get") [ -n "$FAKE_PROFILE_REGION" ] && echo "$FAKE_PROFILE_REGION" || exit 1 ;;
  "cloudformation describe-stacks")
    if [ -n "$FAKE_BOOTSTRAP_STATUS" ]; then echo "$FAKE_BOOTSTRAP_STATUS"; else
      echo "An error occurred (ValidationError) when calling the DescribeStacks operation: Stack with id CDKToolkit does not exist" >&2
      exit 254
    fi ;;
  "lambda get-account-settings") echo "\${FAKE_CONCURRENCY:-1000}" ;;
  "apigatewayv2 get-apis") [ -n "$FAKE_NOT_DEPLOYED" ] && echo None || echo https://abc123.execute-api.eu-west-1.amazonaws.com ;;
  "cloudformation describe-stack-resources")
    if [ -n "$FAKE_NOT_DEPLOYED" ]; then
      echo "An error occurred (ValidationError) when calling the DescribeStackResources operation: Stack with id DispatchData-sandbox does not exist" >&2
      exit 254
    fi
    echo arn:aws:secretsmanager:eu-west-1:123456789012:secret:AdminPassword-x ;;
  "secretsmanager get-secret-value") echo seeded-password ;;
  *) echo "fake aws does not know: $*" >&2; exit 2 ;;
esac
`;

let fakeBin: string;
let awsLog: string;
let ses: Server;
let sesUrl: string;
/** The SES v2 identities the stand-in knows, by domain. */
const identities = new Map<string, { VerifiedForSendingStatus: boolean; DkimAttributes: { Status: string } }>();

beforeAll(async () => {
  fakeBin = mkdtempSync(join(tmpdir(), 'fake-aws-'));
  writeFileSync(join(fakeBin, 'aws'), FAKE_AWS);
  chmodSync(join(fakeBin, 'aws'), 0o755);
  awsLog = join(fakeBin, 'calls.log');
  ses = createServer((request, response) => {
    const domain = decodeURIComponent((request.url ?? '').split('/').pop() ?? '');
    const identity = identities.get(domain);
    if (domain === 'denied.example.com') {
      response.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': 'AccessDeniedException' });
      return response.end(JSON.stringify({ message: 'not allowed: ses:GetEmailIdentity' }));
    }
    if (!identity) {
      response.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'NotFoundException' });
      return response.end(JSON.stringify({ message: `${domain} does not exist` }));
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ IdentityType: 'DOMAIN', ...identity }));
  });
  await new Promise<void>((resolve) => ses.listen(0, '127.0.0.1', resolve));
  sesUrl = `http://127.0.0.1:${(ses.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => ses.close(() => resolve())));

/** The environment of a run with the fake AWS CLI first on PATH and SES at the stand-in. */
const fakeEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const { AWS_REGION: _r, AWS_DEFAULT_REGION: _d, CDK_DEFAULT_REGION: _c, AWS_PROFILE: _p, ...base } = process.env;
  return {
    ...base,
    PATH: `${fakeBin}:${process.env['PATH']}`,
    FAKE_AWS_LOG: awsLog,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_SESV2: sesUrl,
    ...extra,
  };
};

const deploy = async (args: string[], env: NodeJS.ProcessEnv) => {
  writeFileSync(awsLog, '');
  const tsx = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
  try {
    const { stdout, stderr } = await run(tsx, [join(REPO_ROOT, 'bin', 'deploy.ts'), ...args], { env, cwd: REPO_ROOT });
    return { code: 0, out: stdout + stderr, aws: readFileSync(awsLog, 'utf8') };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr, aws: readFileSync(awsLog, 'utf8') };
  }
};

describe('the look-ups', () => {
  it('reads the SES identity of a domain, and none where SES has none', async () => {
    const client = mockClient(SESv2Client);
    client
      .on(GetEmailIdentityCommand, { EmailIdentity: 'mail.example.com' })
      .resolves({ VerifiedForSendingStatus: true, DkimAttributes: { Status: 'SUCCESS' } });
    client
      .on(GetEmailIdentityCommand, { EmailIdentity: 'other.example.com' })
      .rejects(new NotFoundException({ message: 'no identity', $metadata: {} }));
    await expect(sesIdentity('mail.example.com', 'eu-west-1')).resolves.toEqual({
      verifiedForSending: true,
      dkimStatus: 'SUCCESS',
    });
    await expect(sesIdentity('other.example.com', 'eu-west-1')).resolves.toBeUndefined();
    client.restore();
  });

  it('reads the account and the bootstrap stack through the AWS CLI, in the deploy’s region', async () => {
    const saved = process.env;
    process.env = fakeEnv();
    try {
      writeFileSync(awsLog, '');
      await expect(callerAccount()).resolves.toBe('123456789012');
      await expect(bootstrapStatus('eu-west-1')).resolves.toBeUndefined();
      process.env['FAKE_BOOTSTRAP_STATUS'] = 'UPDATE_COMPLETE';
      await expect(bootstrapStatus('eu-west-1')).resolves.toBe('UPDATE_COMPLETE');
      expect(readFileSync(awsLog, 'utf8')).toContain('--stack-name CDKToolkit --region eu-west-1');
      process.env['FAKE_CONCURRENCY'] = '10';
      await expect(concurrencyQuota('eu-west-1')).resolves.toBe(10);
      await expect(deployedStage('sandbox', 'eu-west-1')).resolves.toEqual({
        url: 'https://abc123.execute-api.eu-west-1.amazonaws.com',
        password: 'seeded-password',
      });
      const calls = readFileSync(awsLog, 'utf8');
      expect(calls).toContain("Items[?Name=='dispatch-sandbox'].ApiEndpoint");
      expect(calls).toContain('--stack-name DispatchData-sandbox --region eu-west-1');
    } finally {
      process.env = saved;
    }
  });
});

describe('npm run smoke (bin/smoke.ts) for a stage that is not deployed (issue 46.16)', () => {
  it('says so in one line and exits 2, with no ValidationError stack', async () => {
    writeFileSync(awsLog, '');
    const tsx = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
    const env = fakeEnv({ AWS_REGION: 'eu-west-1', FAKE_NOT_DEPLOYED: '1' });
    const failed = await run(tsx, [join(REPO_ROOT, 'bin', 'smoke.ts'), '--stage', 'sandbox'], { env, cwd: REPO_ROOT })
      .then(() => ({ code: 0, stderr: '' }))
      .catch((error: { code: number; stderr: string }) => error);
    expect(failed.code).toBe(2);
    expect(failed.stderr.trim()).toBe(
      'stage sandbox is not deployed in eu-west-1 (no API dispatch-sandbox or no DispatchData-sandbox)',
    );
  });
});

describe('npm run deploy (bin/deploy.ts)', () => {
  const verified = () =>
    identities.set('mail.example.com', { VerifiedForSendingStatus: true, DkimAttributes: { Status: 'SUCCESS' } });
  const base = ['--stage', 'sandbox', '-c', 'mailFrom=no-reply@mail.example.com'];

  it('stops with one message, before any AWS call, without a sender or a region', async () => {
    const result = await deploy(['--stage', 'sandbox'], fakeEnv({ CDK_DEFAULT_REGION: 'eu-west-1' }));
    expect(result.code).toBe(1);
    expect(result.out).toContain('Deploy stopped before any CloudFormation change (2 to fix)');
    expect(result.out).toContain('-c mailFrom=');
    expect(result.out).toContain('export AWS_REGION=eu-west-1 instead');
    expect(result.aws).not.toMatch(/sts|cloudformation/);
  });

  it('stops at an SES identity not verified in the deploy’s region, having created nothing', async () => {
    identities.set('mail.example.com', { VerifiedForSendingStatus: false, DkimAttributes: { Status: 'PENDING' } });
    const result = await deploy(base, fakeEnv({ AWS_REGION: 'eu-west-1' }));
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/not verified mail\.example\.com in eu-west-1 yet \(DKIM PENDING\)/);
    expect(result.aws.split('\n').filter((line) => line.startsWith('cloudformation'))).toEqual([
      'cloudformation describe-stacks --stack-name CDKToolkit --region eu-west-1 --query Stacks[0].StackStatus --output text',
    ]);
  });

  it('reports a look-up it may not make as a problem, with the others', async () => {
    const result = await deploy(
      ['--stage', 'sandbox', '-c', 'mailFrom=no-reply@denied.example.com'],
      fakeEnv({ AWS_REGION: 'eu-west-1', FAKE_BOOTSTRAP_STATUS: 'ROLLBACK_COMPLETE' }),
    );
    expect(result.code).toBe(1);
    expect(result.out).toContain('(2 to fix)');
    expect(result.out).toMatch(/Could not read the SES identity denied\.example\.com in eu-west-1: .*not allowed/);
  });

  it('stops at a broken bootstrap stack', async () => {
    verified();
    const result = await deploy(base, fakeEnv({ AWS_REGION: 'eu-west-1', FAKE_BOOTSTRAP_STATUS: 'ROLLBACK_COMPLETE' }));
    expect(result.code).toBe(1);
    expect(result.out).toContain('CDKToolkit of aws://123456789012/eu-west-1 is ROLLBACK_COMPLETE');
  });

  it('stops at reserved concurrency a new account’s quota cannot hold, and notes the quota to request', async () => {
    verified();
    const env = fakeEnv({ AWS_REGION: 'eu-west-1', FAKE_BOOTSTRAP_STATUS: 'CREATE_COMPLETE', FAKE_CONCURRENCY: '10' });
    const refused = await deploy([...base, '-c', 'reserveConcurrency=true', '--check'], env);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('the quota in eu-west-1 must be at least 295, it is 10');
    const noted = await deploy([...base, '--check'], env);
    expect(noted.code).toBe(0);
    expect(noted.out).toContain('--quota-code L-B99A9384 --desired-value 1000 --region eu-west-1');
  });

  it('plans the bootstrap and the deploy in the one region when every check passes (--check)', async () => {
    verified();
    const result = await deploy(
      [...base, '--check'],
      fakeEnv({ AWS_REGION: 'eu-west-1', FAKE_PROFILE_REGION: 'us-east-1' }),
    );
    expect(result.out).toContain('Deploying stage sandbox to aws://123456789012/eu-west-1');
    expect(result.out).toContain('bootstrap: aws://123456789012/eu-west-1');
    expect(result.out).toContain(
      'then: cdk deploy --all -c stage=sandbox -c mailFrom=no-reply@mail.example.com (AWS_REGION=eu-west-1)',
    );
    expect(result.code).toBe(0);
  });

  it('warns of alarms nobody hears without alarmEmail, and refuses prod without one (issue 46.17)', async () => {
    verified();
    const env = fakeEnv({ AWS_REGION: 'eu-west-1', FAKE_BOOTSTRAP_STATUS: 'CREATE_COMPLETE' });
    const warned = await deploy([...base, '--check'], env);
    expect(warned.code).toBe(0);
    expect(warned.out).toContain('warning: no alarmEmail: every alarm of stage sandbox goes to an SNS topic nobody');
    expect(alarmEmailCheck('sandbox', 'oncall@mail.example.com')).toEqual({});
    const prod = ['--stage', 'prod', '-c', 'mailFrom=no-reply@mail.example.com', '--check'];
    const refused = await deploy(prod, env);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('Stage prod needs someone to hear its alarms: -c alarmEmail=');
    expect(refused.aws).not.toMatch(/sts|cloudformation/);
  });
});

describe('the bootstrap (issue 35 item 1)', () => {
  it('runs the CDK CLI where it bootstraps the environment without synthesizing the app', async () => {
    const { command, args, cwd } = bootstrapInvocation({ account: '123456789012', region: 'eu-west-1' });
    // No AWS to reach: the run fails once it calls AWS, which is past the point where the app would have stopped it.
    const env = { ...deployEnv('eu-west-1', fakeEnv()), AWS_ENDPOINT_URL: 'http://127.0.0.1:9' };
    const outcome = await run(command, args, { cwd, env, timeout: 120_000 }).then(
      ({ stdout, stderr }) => stdout + stderr,
      (error: { stdout: string; stderr: string }) => error.stdout + error.stderr,
    );
    expect(outcome).toContain('Bootstrapping environment aws://123456789012/eu-west-1');
    expect(outcome).not.toMatch(/mailFrom|Subprocess exited/);
  }, 150_000);
});
