/**
 * The deploy script's look-ups and commands (bin/deploy.ts; the checks themselves are lib/deploy-checks.ts). SES
 * through the SDK; the account, the profile's region and the bootstrap stack through the AWS CLI v2, which
 * docs/deploy.md already requires (the service ships no STS or CloudFormation client); `cdk` from the checkout.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetEmailIdentityCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import type { SesIdentity } from '#lib/deploy-checks';
import { wire } from '#shared/aws/wire';

const run = promisify(execFile);

/** The checkout's root (this file is lib/deploy-aws.ts). */
export const REPO_ROOT = join(import.meta.dirname, '..');
const CDK = join(REPO_ROOT, 'node_modules', '.bin', 'cdk');

/** The SES identity of `domain` in `region`, or undefined when SES has none. */
export async function sesIdentity(domain: string, region: string): Promise<SesIdentity | undefined> {
  const ses = new SESv2Client({ ...wire(), region });
  try {
    const out = await ses.send(new GetEmailIdentityCommand({ EmailIdentity: domain }));
    return { verifiedForSending: out.VerifiedForSendingStatus === true, dkimStatus: out.DkimAttributes?.Status };
  } catch (error) {
    if ((error as { name?: string }).name === 'NotFoundException') return undefined;
    throw error;
  } finally {
    ses.destroy();
  }
}

async function aws(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { stdout } = await run('aws', [...args, '--output', 'text'], { env });
  return stdout.trim();
}

/** The account the credentials in the environment belong to. */
export const callerAccount = () => aws(['sts', 'get-caller-identity', '--query', 'Account']);

/** The `region` of the profile in use (`AWS_PROFILE` or default), as ~/.aws/config says it; undefined when unset. */
export async function profileRegion(): Promise<string | undefined> {
  // Without the region variables, so that the answer is the profile's own.
  const { AWS_REGION: _r, AWS_DEFAULT_REGION: _d, ...env } = process.env;
  try {
    return (await aws(['configure', 'get', 'region'], env)) || undefined;
  } catch {
    return undefined; // `aws configure get` exits 1 when the value is not set
  }
}

/** The status of the CDK bootstrap stack `CDKToolkit` in `region`, or undefined when there is none. */
export async function bootstrapStatus(region: string): Promise<string | undefined> {
  try {
    return await aws([
      'cloudformation',
      'describe-stacks',
      '--stack-name',
      'CDKToolkit',
      '--region',
      region,
      '--query',
      'Stacks[0].StackStatus',
    ]);
  } catch (error) {
    if (/does not exist/.test(String((error as { stderr?: string }).stderr ?? error))) return undefined;
    throw error;
  }
}

/** The account's Lambda concurrency quota (`ConcurrentExecutions`) in `region`. */
export const concurrencyQuota = async (region: string) =>
  Number(
    await aws(['lambda', 'get-account-settings', '--region', region, '--query', 'AccountLimit.ConcurrentExecutions']),
  );

/** A stage with no API or no data stack in the region: its message is all a person needs (no stack trace). */
export class StageNotDeployed extends Error {
  override name = 'StageNotDeployed';
}

/**
 * What the smoke check needs of a deployed stage (docs/deploy.md, step 4): the HTTP API's URL (`dispatch-<stage>`)
 * and the seeded SysAdmin's password (the `AdminPassword…` secret of `DispatchData-<stage>`).
 */
export async function deployedStage(stage: string, region: string): Promise<{ url: string; password: string }> {
  const url = await aws([
    'apigatewayv2',
    'get-apis',
    '--region',
    region,
    '--query',
    `Items[?Name=='dispatch-${stage}'].ApiEndpoint | [0]`,
  ]);
  const secret = await aws([
    'cloudformation',
    'describe-stack-resources',
    '--stack-name',
    `DispatchData-${stage}`,
    '--region',
    region,
    '--query',
    "StackResources[?starts_with(LogicalResourceId, 'AdminPassword')].PhysicalResourceId | [0]",
  ]).catch((error: unknown) => {
    // CloudFormation answers a stack that does not exist with a ValidationError: that is "not deployed" (issue 46.16).
    if (/does not exist/.test(String((error as { stderr?: string }).stderr ?? error))) return undefined;
    throw error;
  });
  if (!url || url === 'None' || !secret || secret === 'None') {
    throw new StageNotDeployed(
      `stage ${stage} is not deployed in ${region} (no API dispatch-${stage} or no DispatchData-${stage})`,
    );
  }
  const password = await aws([
    'secretsmanager',
    'get-secret-value',
    '--secret-id',
    secret,
    '--region',
    region,
    '--query',
    'SecretString',
  ]);
  return { url, password };
}

/** The environment every child process of a deploy gets: the one region, which every tool then reads alike. */
export function deployEnv(region: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const { CDK_DEFAULT_REGION: _overwritten, ...rest } = env;
  return { ...rest, AWS_REGION: region, AWS_DEFAULT_REGION: region };
}

/**
 * The `cdk bootstrap` of one environment, run from an empty directory: in the checkout the CDK CLI would synthesize
 * the app first (cdk.json names it), and the app refuses to start without the deploy's context (issue 35 item 1).
 */
export function bootstrapInvocation(environment: { account: string; region: string }) {
  return {
    command: CDK,
    args: ['bootstrap', `aws://${environment.account}/${environment.region}`],
    cwd: mkdtempSync(join(tmpdir(), 'dispatch-bootstrap-')),
  };
}

/** Runs a command with the terminal as its input and output; resolves with its exit code. */
export function runInteractive(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

/** `cdk` of the checkout. */
export const CDK_BIN = CDK;
