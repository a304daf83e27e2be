/**
 * Safe deploys (issue 25.3, docs/deploy.md "Safe deploys"): an API function is published as a version behind the
 * alias `live`, its routes invoke the alias, and CodeDeploy moves the alias to a new version gradually (a canary),
 * rolling back by itself when that function's error alarm goes off or the deployment fails. One CodeDeploy
 * application and one deployment role per stack; per function a version, the alias, its deployment group and its
 * error alarm (four resources: the largest area stack stays far below CloudFormation's 500).
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import {
  type ILambdaDeploymentConfig,
  LambdaApplication,
  LambdaDeploymentConfig,
  LambdaDeploymentGroup,
} from 'aws-cdk-lib/aws-codedeploy';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias } from 'aws-cdk-lib/aws-lambda';
import { Construct, type IConstruct } from 'constructs';
import type { DispatchFunction, LiveFunction } from '#lib/constructs/dispatch-function';
import { alarmNamePrefix, stageOf } from '#lib/stage';

/** The alias every route, authorizer and WebSocket integration invokes. */
export const LIVE_ALIAS = 'live';

/** How traffic moves to a new version: `canary` (every stage's default) or `all-at-once` (a sandbox's choice). */
export type DeployStyle = 'canary' | 'all-at-once';

/**
 * The error alarm of one function's alias: the Lambda `Errors` metric (invocations that threw, timed out or ran out
 * of memory; the handler kit answers bad input with problem+json, which is no error) summed per minute, in ALARM
 * when two consecutive minutes each have at least one. One error alone may be a dependency's passing failure; two
 * minutes running, inside the canary's five, is a version that fails, and the alarm fires with three minutes to spare
 * before CodeDeploy would shift the remaining 90 %. A minute without invocations is no breach (a quiet sandbox).
 */
export const ERROR_ALARM = {
  period: Duration.minutes(1),
  threshold: 1,
  evaluationPeriods: 2,
  datapointsToAlarm: 2,
} as const;

/**
 * The deployment style the app's context asks for: `-c deploy=all-at-once` switches a sandbox to one step (still
 * through the alias and its deployment group, with rollback on a failed deployment); `-c stage=prod` always deploys
 * by canary and refuses `all-at-once`. Anything else than the two styles is refused, not guessed.
 */
export function deployStyleOf(scope: IConstruct): DeployStyle {
  const raw: unknown = scope.node.tryGetContext('deploy');
  const stage: unknown = scope.node.tryGetContext('stage');
  const style = raw === undefined ? 'canary' : String(raw);
  if (style !== 'canary' && style !== 'all-at-once') {
    throw new Error(
      `-c deploy=${style}: the deployment style is canary (the default) or all-at-once (docs/deploy.md).`,
    );
  }
  if (style === 'all-at-once' && stage === 'prod') {
    throw new Error('-c deploy=all-at-once is for sandbox stages: prod always deploys by canary (docs/deploy.md).');
  }
  return style;
}

/** 10 % of the traffic for five minutes, then the rest; or everything at once. */
export const deploymentConfigOf = (style: DeployStyle): ILambdaDeploymentConfig =>
  style === 'canary' ? LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES : LambdaDeploymentConfig.ALL_AT_ONCE;

/** The stack's CodeDeploy application and deployment role, and `publish`, which puts a function behind `live`. */
export class SafeDeploys extends Construct {
  readonly application: LambdaApplication;
  readonly role: Role;
  readonly deploymentConfig: ILambdaDeploymentConfig;

  /** The one SafeDeploys of a stack (made on first use). */
  static of(scope: IConstruct): SafeDeploys {
    const stack = Stack.of(scope);
    return (stack.node.tryFindChild('SafeDeploys') as SafeDeploys | undefined) ?? new SafeDeploys(stack, 'SafeDeploys');
  }

  private constructor(scope: Construct, id: string) {
    super(scope, id);
    this.deploymentConfig = deploymentConfigOf(deployStyleOf(this));
    this.application = new LambdaApplication(this, 'Application');
    // One role for every deployment group of the stack (each group would otherwise make its own: a role per function).
    this.role = new Role(this, 'DeploymentRole', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        'AWSCodeDeployRoleForLambdaLimited is the AWS-maintained minimum for CodeDeploy to move Lambda aliases and read their alarms.',
    });
  }

  /** Publishes `fn`'s current version behind `live`, with its deployment group and error alarm. */
  publish(fn: DispatchFunction): LiveFunction {
    const alias = new Alias(fn, 'Live', { aliasName: LIVE_ALIAS, version: fn.currentVersion });
    const errorAlarm = new Alarm(fn, 'ErrorAlarm', {
      // Named like every alarm of the stage (unique in the account: stages share one).
      alarmName: `${alarmNamePrefix(stageOf(fn))}-${Stack.of(fn).node.id.replace(/^Dispatch/, '')}-${fn.node.id}-Errors-live`,
      alarmDescription: `${fn.handlerPath}: the ${LIVE_ALIAS} alias threw in ${ERROR_ALARM.datapointsToAlarm} consecutive minutes (CodeDeploy rolls a deployment back on it).`,
      metric: alias.metricErrors({ period: ERROR_ALARM.period, statistic: 'Sum' }),
      threshold: ERROR_ALARM.threshold,
      evaluationPeriods: ERROR_ALARM.evaluationPeriods,
      datapointsToAlarm: ERROR_ALARM.datapointsToAlarm,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      actionsEnabled: true,
    });
    const deploymentGroup = new LambdaDeploymentGroup(fn, 'Deployment', {
      application: this.application,
      alias,
      role: this.role,
      deploymentConfig: this.deploymentConfig,
      alarms: [errorAlarm],
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
    });
    const live = { alias, errorAlarm, deploymentGroup };
    fn.live = live;
    return live;
  }
}
