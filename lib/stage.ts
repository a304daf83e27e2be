/**
 * Stages (issue 25.4): `cdk synth -c stage=<name>` builds the whole service for one stage; the default is a sandbox.
 * Every stack name and every name that must be unique in an account (API, alarm, dashboard and topic names) carries
 * the stage, so stages share an account. `prod` keeps what must survive a mistake: tables refuse deletion, secrets,
 * queues and log groups stay when their stack is deleted, and logs are kept longer.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';

export const DEFAULT_STAGE = 'sandbox';
export const PROD_STAGE = 'prod';

/** Lower-case letters, digits and hyphens, starting with a letter: valid in every AWS name it becomes part of. */
const STAGE_NAME = /^[a-z][a-z0-9-]{0,19}$/;

export interface StageConfig {
  /** The stage's name, as given by `-c stage=<name>`. */
  readonly name: string;
  readonly prod: boolean;
  /** Tables: deletion protection on (prod). */
  readonly deletionProtection: boolean;
  /** Secrets, queues and log groups when their stack is deleted: RETAIN in prod, DESTROY elsewhere. */
  readonly removalPolicy: RemovalPolicy;
  /** Function logs: a year in prod (incident reviews, audits), a month elsewhere. */
  readonly functionLogRetention: RetentionDays;
  /** API access logs: two years in prod (who called what, for disputes and security reviews), 3 months elsewhere. */
  readonly accessLogRetention: RetentionDays;
}

/** Why `name` cannot be a stage's name (AWS would refuse it in a name it becomes part of), or undefined. */
export function stageNameProblem(name: string): string | undefined {
  return STAGE_NAME.test(name)
    ? undefined
    : `stage "${name}": use lower-case letters, digits and hyphens, starting with a letter, at most 20 characters (docs/deploy.md).`;
}

/** The stage of the app `scope` belongs to (context value `stage`); throws on a name AWS would refuse. */
export function stageOf(scope: IConstruct): StageConfig {
  const raw: unknown = scope.node.tryGetContext('stage') ?? DEFAULT_STAGE;
  const name = String(raw);
  const problem = stageNameProblem(name);
  if (problem) throw new Error(problem);
  const prod = name === PROD_STAGE;
  return {
    name,
    prod,
    deletionProtection: prod,
    removalPolicy: prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    functionLogRetention: prod ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH,
    accessLogRetention: prod ? RetentionDays.TWO_YEARS : RetentionDays.THREE_MONTHS,
  };
}

/** The CloudFormation stack name of the stack with construct id `id` (`DispatchData` → `DispatchData-sandbox`). */
export const stackNameFor = (id: string, stage: StageConfig) => `${id}-${stage.name}`;

/** The name every alarm of a stage starts with: alarm names are unique per account and region. */
export const alarmNamePrefix = (stage: StageConfig) => `Dispatch-${stage.name}`;
