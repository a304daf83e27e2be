/**
 * The checks of a first deploy (issue 35; `npm run deploy`, bin/deploy.ts), pure: what the operator gave (the
 * context, the region's sources) and what AWS answered (the account, the bootstrap stack, the SES identity) in, one
 * message per problem out, each saying what to run. bin/deploy.ts runs them all before any CloudFormation call,
 * and deploys only when none fails. The AWS look-ups are lib/deploy-aws.ts.
 */
import { routes, websocketRoutes } from '#shared/routes';
import type { Throttle } from '#shared/routes/types';

/** What `requireDeployContext` (lib/app.ts) and the deploy script both refuse as the sender of the service mail. */
export function mailFromProblem(mailFrom: unknown): string | undefined {
  if (typeof mailFrom !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(mailFrom)) {
    return (
      'Set the sender of the service mail: cdk deploy -c mailFrom=no-reply@your-domain.example (an address or domain ' +
      'verified in SES in the target account and region; see docs/deploy.md). Every cdk command of the app needs it ' +
      '(synth, diff, destroy); `npm run synth` alone synthesizes without one (it gives a sender that never sends).'
    );
  }
  if (mailFrom.toLowerCase().endsWith('@dispatch.example')) {
    return `mailFrom ${mailFrom} is the placeholder sender: SES can never verify it (docs/deploy.md).`;
  }
  return undefined;
}

/**
 * Where the stage's alarms go: every alarm notifies one SNS topic, and `-c alarmEmail=<address>` subscribes a person
 * to it. Without one nobody hears them: a problem for `prod`, a warning elsewhere (issue 46.17).
 */
export function alarmEmailCheck(stage: string, alarmEmail: unknown): { problem?: string; warning?: string } {
  if (typeof alarmEmail === 'string' && /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(alarmEmail)) return {};
  const fix =
    '-c alarmEmail=oncall@your-domain.example (then confirm the subscription from the mail SNS sends; docs/deploy.md)';
  if (stage === 'prod') return { problem: `Stage prod needs someone to hear its alarms: ${fix}.` };
  return {
    warning: `no alarmEmail: every alarm of stage ${stage} goes to an SNS topic nobody is subscribed to; add ${fix}.`,
  };
}

/** The domain SES must have verified: the functions may send from `identity/<domain>` only. */
export const mailDomainOf = (mailFrom: string) => mailFrom.slice(mailFrom.lastIndexOf('@') + 1).toLowerCase();

/**
 * Where a region can come from. Each tool of a deploy reads its own: the CDK CLI `AWS_REGION`, then
 * `AWS_DEFAULT_REGION`, then the profile, then us-east-1, and it **overwrites** `CDK_DEFAULT_REGION` with that for
 * the app; the SDK v3 (the script's own look-ups) `AWS_REGION`, then the profile; the AWS CLI as the CDK CLI.
 */
export interface RegionSources {
  /** `--region` of the deploy script. */
  flag?: string | undefined;
  AWS_REGION?: string | undefined;
  AWS_DEFAULT_REGION?: string | undefined;
  CDK_DEFAULT_REGION?: string | undefined;
  /** The `region` of the profile in ~/.aws/config (`aws configure get region`). */
  profile?: string | undefined;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * The one region of the deploy, or why there is none: every source that is set must name the same region (the
 * deploy script then exports it as `AWS_REGION` to the CDK CLI and uses it for every look-up). A profile's region
 * counts only when neither `--region` nor `AWS_REGION` overrides it (they do for every tool). `CDK_DEFAULT_REGION`
 * alone is refused: the CDK CLI replaces it with its own region (us-east-1 when none is configured).
 */
export function resolveRegion(sources: RegionSources): Checked<string> {
  const named: [string, string | undefined][] = [
    ['--region', sources.flag],
    ['AWS_REGION', sources.AWS_REGION],
    ['AWS_DEFAULT_REGION', sources.AWS_DEFAULT_REGION],
    ['CDK_DEFAULT_REGION', sources.CDK_DEFAULT_REGION],
    ['the profile’s region', sources.flag || sources.AWS_REGION ? undefined : sources.profile],
  ];
  const set = named.filter((entry): entry is [string, string] => Boolean(entry[1]?.trim()));
  const regions = new Set(set.map(([, region]) => region.trim()));
  if (regions.size > 1) {
    return {
      ok: false,
      problem:
        `The region is not one value: ${set.map(([name, region]) => `${name}=${region}`).join(', ')}. The CDK CLI, ` +
        'the SDK and the AWS CLI each pick a different one of these; export AWS_REGION=<region> and unset the others ' +
        '(or make them agree).',
    };
  }
  const [region] = regions;
  if (!region) {
    return {
      ok: false,
      problem: 'No region: export AWS_REGION=<region> (e.g. eu-west-1), or pass --region (docs/deploy.md).',
    };
  }
  if (set.length === 1 && set[0]![0] === 'CDK_DEFAULT_REGION') {
    return {
      ok: false,
      problem:
        `CDK_DEFAULT_REGION=${region} alone does not choose the region: the CDK CLI overwrites it with the SDK's ` +
        `region (us-east-1 when none is configured). export AWS_REGION=${region} instead.`,
    };
  }
  if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(region)) return { ok: false, problem: `"${region}" is not an AWS region name.` };
  return { ok: true, value: region };
}

/** The CDK bootstrap stack's states in which the environment is bootstrapped. */
const BOOTSTRAPPED = new Set(['CREATE_COMPLETE', 'UPDATE_COMPLETE', 'UPDATE_ROLLBACK_COMPLETE']);
/** States in which `cdk bootstrap` would fail or race: an operator must look first. */
const BOOTSTRAP_BROKEN = /(_IN_PROGRESS|_FAILED|ROLLBACK_COMPLETE)$/;

/**
 * What to do about one environment's bootstrap stack (`CDKToolkit`), given its status (undefined: no such stack):
 * nothing, bootstrap it, or stop with the reason.
 */
export function bootstrapAction(
  environment: { account: string; region: string },
  status: string | undefined,
): { action: 'none' | 'bootstrap' } | { action: 'stop'; problem: string } {
  if (status && BOOTSTRAPPED.has(status)) return { action: 'none' };
  if (status === undefined) return { action: 'bootstrap' };
  if (status === 'DELETE_COMPLETE') return { action: 'bootstrap' };
  const env = `aws://${environment.account}/${environment.region}`;
  return {
    action: 'stop',
    problem: BOOTSTRAP_BROKEN.test(status)
      ? `The CDK bootstrap stack CDKToolkit of ${env} is ${status}: wait for it, or delete it ` +
        `(aws cloudformation delete-stack --stack-name CDKToolkit --region ${environment.region}) and run the deploy again.`
      : `The CDK bootstrap stack CDKToolkit of ${env} is ${status}, not bootstrapped.`,
  };
}

/** The SES identity of a domain as SES v2 describes it (undefined: no identity). */
export interface SesIdentity {
  verifiedForSending: boolean;
  dkimStatus?: string | undefined;
}

/** Why mail from `mailFrom` would be refused in `region`, with the commands that fix it; undefined if it is not. */
export function sesProblem(mailFrom: string, region: string, identity: SesIdentity | undefined): string | undefined {
  const domain = mailDomainOf(mailFrom);
  if (!identity) {
    return (
      `SES has no identity for ${domain} in ${region} (the functions send as ${mailFrom}, allowed for identity/${domain} ` +
      `only). Create it and publish its DKIM records (docs/deploy.md, step 2): aws sesv2 create-email-identity ` +
      `--email-identity ${domain} --region ${region}`
    );
  }
  if (!identity.verifiedForSending) {
    return (
      `SES has not verified ${domain} in ${region} yet (DKIM ${identity.dkimStatus ?? 'status unknown'}): publish ` +
      `its DKIM tokens as CNAME records (aws sesv2 get-email-identity --email-identity ${domain} --region ${region} ` +
      `--query DkimAttributes.Tokens) and run the deploy again once VerifiedForSendingStatus is true.`
    );
  }
  return undefined;
}

/** What `-c reserveConcurrency=true` reserves: the throttled routes' figures added up (docs/throttling.md). */
export const RESERVED_CONCURRENCY = ([...routes, ...websocketRoutes] as readonly { throttle?: Throttle }[]).reduce(
  (sum, route) => sum + (route.throttle?.concurrency ?? 0),
  0,
);
/** Lambda refuses a reservation that would leave the account fewer unreserved concurrent executions than this. */
export const MIN_UNRESERVED_CONCURRENCY = 100;
/** What a region's Lambda concurrency quota is once AWS has raised a new account's (docs/deploy.md asks for it). */
export const REQUESTED_CONCURRENCY = 1000;

/**
 * The account's Lambda concurrency quota in the deploy's region against what the stage needs: a problem when the
 * reservations of `-c reserveConcurrency=true` would be refused (the deploy would fail half-way), a note when the
 * quota is a new account's (the service runs, with little room: the queue worker takes at most 2 of it).
 */
export function concurrencyCheck(
  quota: number,
  region: string,
  context: Record<string, unknown>,
): { problem?: string; note?: string } {
  const request =
    `aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 ` +
    `--desired-value ${REQUESTED_CONCURRENCY} --region ${region}`;
  const needed = RESERVED_CONCURRENCY + MIN_UNRESERVED_CONCURRENCY;
  if (String(context['reserveConcurrency'] ?? 'false') === 'true' && quota < needed) {
    return {
      problem:
        `-c reserveConcurrency=true reserves ${RESERVED_CONCURRENCY} concurrent executions and Lambda keeps ` +
        `${MIN_UNRESERVED_CONCURRENCY} unreserved: the quota in ${region} must be at least ${needed}, it is ${quota}. ` +
        `Request more (${request}) or deploy without it.`,
    };
  }
  if (quota < REQUESTED_CONCURRENCY) {
    return {
      note:
        `Lambda's concurrency quota in ${region} is ${quota} (a new account's): every function of the stage shares ` +
        `it, so a burst throttles the authorizer. Request ${REQUESTED_CONCURRENCY}: ${request}`,
    };
  }
  return {};
}

/** What the deploy script was given: its own options and the `-c name=value` context it passes on to cdk. */
export interface DeployArgs {
  /** Context from the command line (`-c name=value`, `--context name=value`, `--stage <name>`), in order. */
  context: Record<string, string>;
  region?: string | undefined;
  /** Only check and print the plan (`--check`). */
  checkOnly: boolean;
  /** Everything after `--`: passed to `cdk deploy` as it is (e.g. `--require-approval never`). */
  cdkArgs: string[];
}

/** Reads the script's arguments; throws on one it does not know (a typo must not deploy something else). */
export function parseDeployArgs(argv: readonly string[]): DeployArgs {
  const args: DeployArgs = { context: {}, checkOnly: false, cdkArgs: [] };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('-')) throw new Error(`${arg} needs a value`);
      i += 1;
      return next;
    };
    if (arg === '--') {
      args.cdkArgs = argv.slice(i + 1);
      break;
    } else if (arg === '-c' || arg === '--context') {
      const pair = value();
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`${arg} ${pair}: use ${arg} name=value`);
      args.context[pair.slice(0, at)] = pair.slice(at + 1);
    } else if (arg === '--stage') args.context['stage'] = value();
    else if (arg === '--region') args.region = value();
    else if (arg === '--check') args.checkOnly = true;
    else throw new Error(`unknown argument ${arg} (docs/deploy.md lists the deploy script's arguments)`);
  }
  return args;
}

/**
 * The context the app will see: cdk.json's, then cdk.context.json's, then the command line's (the CDK CLI's order of
 * precedence, the command line winning).
 */
export function effectiveContext(
  cdkJson: Record<string, unknown>,
  cdkContextJson: Record<string, unknown>,
  commandLine: Record<string, string>,
): Record<string, unknown> {
  return { ...cdkJson, ...cdkContextJson, ...commandLine };
}

/** The environments to bootstrap: the stage's region, and us-east-1 for `DispatchEdge` with `-c waf=true`. */
export function environmentsOf(account: string, region: string, context: Record<string, unknown>) {
  const regions = String(context['waf'] ?? 'false') === 'true' ? [region, 'us-east-1'] : [region];
  return [...new Set(regions)].map((r) => ({ account, region: r }));
}

/** The `cdk deploy` command line: every stack, the command line's context, and what followed `--`. */
export function cdkDeployArgs(args: DeployArgs): string[] {
  return [
    'deploy',
    '--all',
    ...Object.entries(args.context).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ...args.cdkArgs,
  ];
}
