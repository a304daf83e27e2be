// `npm run deploy -- --stage sandbox -c mailFrom=no-reply@mail.example.com [-c name=value …] [--region r] [--check]
// [-- <cdk deploy options>]`: a whole deploy in order (docs/deploy.md). Every check runs before any CloudFormation
// call: the context, one region everywhere, credentials, the SES identity, the bootstrap stack, the Lambda
// concurrency quota. Then it bootstraps an environment that is not, and runs `cdk deploy --all` in the one region.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  bootstrapInvocation,
  bootstrapStatus,
  CDK_BIN,
  callerAccount,
  concurrencyQuota,
  deployEnv,
  profileRegion,
  REPO_ROOT,
  runInteractive,
  sesIdentity,
} from '#lib/deploy-aws';
import {
  alarmEmailCheck,
  bootstrapAction,
  cdkDeployArgs,
  concurrencyCheck,
  effectiveContext,
  environmentsOf,
  mailDomainOf,
  mailFromProblem,
  parseDeployArgs,
  resolveRegion,
  sesProblem,
} from '#lib/deploy-checks';
import { DEFAULT_STAGE, stageNameProblem } from '#lib/stage';

const stop = (problems: string[]): never => {
  console.error(`Deploy stopped before any CloudFormation change (${problems.length} to fix):`);
  for (const problem of problems) console.error(`  - ${problem}`);
  process.exit(1);
};
const readJson = (file: string): Record<string, unknown> =>
  existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};

let args: ReturnType<typeof parseDeployArgs>;
try {
  args = parseDeployArgs(process.argv.slice(2));
} catch (error) {
  stop([(error as Error).message]);
}
const context = effectiveContext(
  (readJson(join(REPO_ROOT, 'cdk.json'))['context'] ?? {}) as Record<string, unknown>,
  readJson(join(REPO_ROOT, 'cdk.context.json')),
  args!.context,
);
const stage = String(context['stage'] ?? DEFAULT_STAGE);
const alarms = alarmEmailCheck(stage, context['alarmEmail']);
const problems = [mailFromProblem(context['mailFrom']), stageNameProblem(stage), alarms.problem].filter(
  (p): p is string => !!p,
);
const region = resolveRegion({
  flag: args!.region,
  AWS_REGION: process.env['AWS_REGION'],
  AWS_DEFAULT_REGION: process.env['AWS_DEFAULT_REGION'],
  CDK_DEFAULT_REGION: process.env['CDK_DEFAULT_REGION'],
  profile: await profileRegion(),
});
if (!region.ok) problems.push(region.problem);
if (problems.length > 0) stop(problems);
const theRegion = (region as { value: string }).value;
const mailFrom = String(context['mailFrom']);

let account: string;
try {
  account = await callerAccount();
} catch (error) {
  stop([`No AWS credentials for the target account (aws sts get-caller-identity: ${String(error).split('\n')[0]}).`]);
}
console.log(`Deploying stage ${stage} to aws://${account!}/${theRegion}`);

/** A look-up that fails (no permission, throttled) is a problem to report with the others, not a stack trace. */
const lookUp = async <T>(what: string, run: () => Promise<T>): Promise<T | undefined> => {
  try {
    return await run();
  } catch (error) {
    problems.push(`Could not read ${what}: ${String((error as { stderr?: string }).stderr || error).trim()}`);
    return undefined;
  }
};
const domain = mailDomainOf(mailFrom);
await lookUp(`the SES identity ${domain} in ${theRegion}`, async () => {
  const ses = sesProblem(mailFrom, theRegion, await sesIdentity(domain, theRegion));
  if (ses) problems.push(ses);
});
const toBootstrap: { account: string; region: string }[] = [];
for (const environment of environmentsOf(account!, theRegion, context)) {
  await lookUp(`the CDK bootstrap stack in ${environment.region}`, async () => {
    const action = bootstrapAction(environment, await bootstrapStatus(environment.region));
    if (action.action === 'stop') problems.push(action.problem);
    if (action.action === 'bootstrap') toBootstrap.push(environment);
  });
}
const quota = await lookUp(`Lambda's concurrency quota in ${theRegion}`, () => concurrencyQuota(theRegion));
const concurrency = quota === undefined ? {} : concurrencyCheck(quota, theRegion, context);
if (concurrency.problem) problems.push(concurrency.problem);
if (problems.length > 0) stop(problems);
if (concurrency.note) console.log(`  note: ${concurrency.note}`);
if (alarms.warning) console.log(`  warning: ${alarms.warning}`);

const env = deployEnv(theRegion);
const deploy = cdkDeployArgs(args!);
console.log(
  [
    `  context: mailFrom=${mailFrom} (SES: ${mailDomainOf(mailFrom)} verified in ${theRegion})`,
    `  bootstrap: ${toBootstrap.length === 0 ? 'done' : toBootstrap.map((e) => `aws://${e.account}/${e.region}`).join(', ')}`,
    `  then: cdk ${deploy.join(' ')} (AWS_REGION=${theRegion})`,
  ].join('\n'),
);
if (args!.checkOnly) process.exit(0);

for (const environment of toBootstrap) {
  const { command, args: bootstrapArgs, cwd } = bootstrapInvocation(environment);
  const code = await runInteractive(command, bootstrapArgs, { cwd, env });
  if (code !== 0) stop([`cdk bootstrap aws://${environment.account}/${environment.region} failed (exit ${code}).`]);
}
const code = await runInteractive(CDK_BIN, deploy, { cwd: REPO_ROOT, env });
if (code === 0) {
  console.log(
    `Deployed stage ${stage} to ${theRegion}. Next: the smoke check, docs/deploy.md step 4, with AWS_REGION=${theRegion}.`,
  );
}
process.exit(code);
