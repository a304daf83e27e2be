/**
 * Issue 35: the checks of a first deploy (lib/deploy-checks.ts), each refusing what made the documented procedure
 * fail in a fresh account: no sender (item 1's context), a region that is not one value (item 2), a bootstrap stack
 * that is missing or broken, an SES identity not verified.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deployEnv, REPO_ROOT } from '../../lib/deploy-aws.ts';
import {
  bootstrapAction,
  cdkDeployArgs,
  concurrencyCheck,
  effectiveContext,
  environmentsOf,
  mailFromProblem,
  parseDeployArgs,
  resolveRegion,
  sesProblem,
} from '../../lib/deploy-checks.ts';
import { stageNameProblem } from '../../lib/stage.ts';

const problemOf = (checked: ReturnType<typeof resolveRegion>) => (checked.ok ? undefined : checked.problem);

describe('the deploy context', () => {
  it('needs a sender SES can verify, and a stage name AWS names can carry', () => {
    expect(mailFromProblem(undefined)).toMatch(/-c mailFrom=/);
    expect(mailFromProblem('not an address')).toMatch(/-c mailFrom=/);
    expect(mailFromProblem('no-reply@dispatch.example')).toMatch(/placeholder/);
    expect(mailFromProblem('no-reply@mail.example.com')).toBeUndefined();
    expect(stageNameProblem('Sandbox_1')).toMatch(/lower-case/);
    expect(stageNameProblem('dev-anna')).toBeUndefined();
  });

  it('lets `npm run synth` synthesize without -c mailFrom, and says so where a cdk command stops (issue 46.18)', () => {
    const scripts = (
      JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    const sender = /-c mailFrom=(\S+)/.exec(scripts['synth'] ?? '')?.[1];
    expect(mailFromProblem(sender)).toBeUndefined();
    expect(mailFromProblem(undefined)).toContain('`npm run synth` alone synthesizes without one');
  });

  it('documents a deploy and a teardown that need no terminal, beside the interactive ones (issue 46.15)', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'deploy.md'), 'utf8');
    const commands = [...page.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap(([, block]) => block!.split('\n'));
    const deploy = commands.find(
      (line) => line.startsWith('npm run deploy') && line.includes('--require-approval never'),
    );
    // npm takes the first `--`; the second hands the flag to `cdk deploy` (parseDeployArgs), as the page says.
    expect(parseDeployArgs(deploy!.split(/\s+/).slice(4)).cdkArgs).toEqual(['--require-approval', 'never']);
    expect(commands.some((line) => /^npx cdk destroy --all --force /.test(line))).toBe(true);
  });

  it('reads the context as the CDK CLI does: cdk.json, then cdk.context.json, then the command line', () => {
    expect(
      effectiveContext({ stage: 'a', keep: 1 }, { stage: 'b', mailFrom: 'x@y.example.org' }, { stage: 'c' }),
    ).toEqual({ stage: 'c', keep: 1, mailFrom: 'x@y.example.org' });
  });

  it('reads its arguments, passes the context and what follows -- to cdk deploy, and refuses an unknown one', () => {
    const args = parseDeployArgs([
      '--stage',
      'sandbox',
      '-c',
      'mailFrom=no-reply@mail.example.com',
      '--context',
      'alarmEmail=oncall@example.com',
      '--region',
      'eu-west-1',
      '--check',
      '--',
      '--require-approval',
      'never',
    ]);
    expect(args).toEqual({
      context: { stage: 'sandbox', mailFrom: 'no-reply@mail.example.com', alarmEmail: 'oncall@example.com' },
      region: 'eu-west-1',
      checkOnly: true,
      cdkArgs: ['--require-approval', 'never'],
    });
    expect(cdkDeployArgs(args)).toEqual([
      'deploy',
      '--all',
      '-c',
      'stage=sandbox',
      '-c',
      'mailFrom=no-reply@mail.example.com',
      '-c',
      'alarmEmail=oncall@example.com',
      '--require-approval',
      'never',
    ]);
    expect(() => parseDeployArgs(['--stag', 'sandbox'])).toThrow(/unknown argument --stag/);
    expect(() => parseDeployArgs(['-c', 'mailFrom'])).toThrow(/name=value/);
    expect(() => parseDeployArgs(['--region'])).toThrow(/needs a value/);
  });
});

describe('one region everywhere (issue 35 item 2)', () => {
  it('refuses CDK_DEFAULT_REGION alone, the old docs’ setting, which the CDK CLI overwrites', () => {
    expect(problemOf(resolveRegion({ CDK_DEFAULT_REGION: 'eu-west-1' }))).toMatch(
      /overwrites it.*us-east-1.*export AWS_REGION=eu-west-1/,
    );
  });

  it('refuses sources that name different regions, naming each', () => {
    expect(problemOf(resolveRegion({ AWS_REGION: 'eu-west-1', CDK_DEFAULT_REGION: 'us-east-1' }))).toMatch(
      /AWS_REGION=eu-west-1, CDK_DEFAULT_REGION=us-east-1/,
    );
    // The SDK reads the profile where the CDK CLI and the AWS CLI read AWS_DEFAULT_REGION.
    expect(problemOf(resolveRegion({ AWS_DEFAULT_REGION: 'eu-west-1', profile: 'eu-central-1' }))).toMatch(
      /not one value/,
    );
    expect(problemOf(resolveRegion({ flag: 'eu-west-1', AWS_REGION: 'eu-west-2' }))).toMatch(/not one value/);
  });

  it('refuses no region at all rather than deploying to us-east-1 by default', () => {
    expect(problemOf(resolveRegion({}))).toMatch(/export AWS_REGION=/);
  });

  it('takes the one region the sources agree on; AWS_REGION or --region overrides the profile for every tool', () => {
    expect(resolveRegion({ AWS_REGION: 'eu-west-1', CDK_DEFAULT_REGION: 'eu-west-1' })).toEqual({
      ok: true,
      value: 'eu-west-1',
    });
    expect(resolveRegion({ AWS_REGION: 'eu-west-1', profile: 'us-east-1' })).toEqual({ ok: true, value: 'eu-west-1' });
    expect(resolveRegion({ flag: 'eu-west-1', profile: 'us-east-1' })).toEqual({ ok: true, value: 'eu-west-1' });
    expect(resolveRegion({ profile: 'eu-north-1' })).toEqual({ ok: true, value: 'eu-north-1' });
    expect(problemOf(resolveRegion({ AWS_REGION: 'ireland' }))).toMatch(/not an AWS region/);
  });

  it('gives every child process the one region, and no CDK_DEFAULT_REGION of its own', () => {
    const env = deployEnv('eu-west-1', { CDK_DEFAULT_REGION: 'us-east-1', AWS_PROFILE: 'sandbox', PATH: '/bin' });
    expect(env).toEqual({
      AWS_PROFILE: 'sandbox',
      PATH: '/bin',
      AWS_REGION: 'eu-west-1',
      AWS_DEFAULT_REGION: 'eu-west-1',
    });
  });
});

describe('the bootstrap stack', () => {
  const env = { account: '123456789012', region: 'eu-west-1' };

  it('bootstraps an environment without one, leaves a bootstrapped one alone, and stops at a broken one', () => {
    expect(bootstrapAction(env, undefined)).toEqual({ action: 'bootstrap' });
    expect(bootstrapAction(env, 'DELETE_COMPLETE')).toEqual({ action: 'bootstrap' });
    for (const status of ['CREATE_COMPLETE', 'UPDATE_COMPLETE', 'UPDATE_ROLLBACK_COMPLETE']) {
      expect(bootstrapAction(env, status)).toEqual({ action: 'none' });
    }
    for (const status of ['ROLLBACK_COMPLETE', 'CREATE_IN_PROGRESS', 'UPDATE_ROLLBACK_FAILED']) {
      const action = bootstrapAction(env, status);
      expect(action.action).toBe('stop');
      expect((action as { problem: string }).problem).toContain(`aws://123456789012/eu-west-1 is ${status}`);
    }
  });

  it('bootstraps us-east-1 too with -c waf=true (DispatchEdge deploys there)', () => {
    expect(environmentsOf('123456789012', 'eu-west-1', {})).toEqual([env]);
    expect(environmentsOf('123456789012', 'eu-west-1', { waf: 'true' })).toEqual([
      env,
      { account: '123456789012', region: 'us-east-1' },
    ]);
    expect(environmentsOf('123456789012', 'us-east-1', { waf: 'true' })).toHaveLength(1);
  });
});

describe('the Lambda concurrency quota (issue 35 item 4)', () => {
  it('refuses reserved concurrency the quota cannot hold, and notes a new account’s quota', () => {
    expect(concurrencyCheck(10, 'eu-west-1', { reserveConcurrency: 'true' }).problem).toMatch(
      /must be at least 295, it is 10/,
    );
    expect(concurrencyCheck(295, 'eu-west-1', { reserveConcurrency: 'true' }).problem).toBeUndefined();
    expect(concurrencyCheck(10, 'eu-west-1', {})).toEqual({ note: expect.stringContaining('L-B99A9384') });
    expect(concurrencyCheck(1000, 'eu-west-1', {})).toEqual({});
  });
});

describe('the SES identity', () => {
  it('needs the sender’s domain, verified for sending, in the deploy’s region', () => {
    const missing = sesProblem('no-reply@Mail.Example.com', 'eu-west-1', undefined);
    expect(missing).toContain('aws sesv2 create-email-identity --email-identity mail.example.com --region eu-west-1');
    const pending = sesProblem('no-reply@mail.example.com', 'eu-west-1', {
      verifiedForSending: false,
      dkimStatus: 'PENDING',
    });
    expect(pending).toMatch(/not verified mail\.example\.com in eu-west-1 yet \(DKIM PENDING\)/);
    expect(sesProblem('no-reply@mail.example.com', 'eu-west-1', { verifiedForSending: true })).toBeUndefined();
  });
});
