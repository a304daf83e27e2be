/**
 * Alarms of the service's functions (issue 25.2), made with cdk-monitoring-constructs: an error alarm and a throttle
 * alarm per function, in the stack of the function (no cross-stack reference per function), each notifying the
 * stage's alarm topic. docs/monitoring.md lists every alarm with its reason and what the on-call does.
 *
 * With safe deploys (issue 25.3): an area function's error alarm is its canary alarm (Errors of the alias `live`, per
 * minute, two minutes running; lib/constructs/safe-deploy.ts), given the topic here, so one alarm pages and rolls
 * back. Functions of the other stacks are watched from DispatchMonitoring: an aliased one (the authorizer, the 404
 * function, the WebSocket routes) pages through its canary alarm too, which names the topic of DispatchData (every
 * stack depends on it; issue 35 item 5), and the others get an error alarm there.
 */
import { Duration } from 'aws-cdk-lib';
import type { IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { DefaultDashboardFactory, MonitoringFacade, SnsAlarmActionStrategy } from 'cdk-monitoring-constructs';
import type { Construct } from 'constructs';
import type { LiveFunction } from '#lib/constructs/dispatch-function';
import { alarmNamePrefix, type StageConfig } from '#lib/stage';

/** Function alarm thresholds; their reasons are in docs/monitoring.md. `max…` alarms when the value is above it. */
export const FUNCTION_ALARMS = {
  /**
   * Errors (invocations that threw or timed out) over 5 minutes. The handler kit answers every expected failure with
   * problem+json and a normal return, so a Lambda error is a crash or a timeout: a bug or an outage, worth a look at
   * the first one. Also what a canary rolls back on.
   */
  maxErrors: 0,
  /** Throttled invocations over 5 minutes: none expected (no reserved concurrency; 1 000 per account and region). */
  maxThrottles: 0,
  period: Duration.minutes(5),
} as const;

/** A facade for alarms only (no dashboard): every alarm notifies `topic` when it fires and when it recovers. */
export function alarmFacade(scope: Construct, id: string, stage: StageConfig, topic: ITopic): MonitoringFacade {
  return new MonitoringFacade(scope, id, {
    alarmFactoryDefaults: {
      actionsEnabled: true,
      action: new SnsAlarmActionStrategy({ onAlarmTopic: topic, onOkTopic: topic }),
      alarmNamePrefix: alarmNamePrefix(stage),
      datapointsToAlarm: 1,
      evaluationPeriods: 1,
    },
    metricFactoryDefaults: {},
    // No dashboard here (the facade would make one named after `id`): the stage's one dashboard is DispatchMonitoring's.
    dashboardFactory: new DefaultDashboardFactory(scope, `${id}Dashboards`, {
      dashboardNamePrefix: `Dispatch-${stage.name}-${id}`,
      createDashboard: false,
      createSummaryDashboard: false,
      createAlarmDashboard: false,
    }),
  });
}

export interface FunctionAlarms {
  errors: IAlarm;
  throttles: IAlarm;
}

const registry = new WeakMap<IFunction, FunctionAlarms>();

/**
 * An error and a throttle alarm for each function, named `Dispatch-<stage>-<group>-<construct id>-…`.
 * Per function rather than one per area: the alarm names the function at fault, and a canary needs its own
 * function's alarm; 2 alarms per function stay far below the stacks' resource limit (test/infra/stacks.test.ts).
 */
export function watchFunctions(
  facade: MonitoringFacade,
  group: string,
  fns: readonly IFunction[],
  topic?: ITopic,
): void {
  for (const fn of fns) {
    // A function behind `live` in a stack that has the topic: its canary alarm (lib/constructs/safe-deploy.ts) is its
    // error alarm and notifies the topic too, one alarm for both jobs (and under the stacks' resource budget).
    const live = topic ? (fn as { live?: LiveFunction }).live : undefined;
    const before = facade.createdAlarms().length;
    facade.monitorLambdaFunction({
      lambdaFunction: fn,
      alarmFriendlyName: `${group}-${fn.node.id}`,
      humanReadableName: `${group} ${fn.node.id}`,
      ...(live
        ? {}
        : {
            addFaultCountAlarm: {
              Critical: { maxErrorCount: FUNCTION_ALARMS.maxErrors, period: FUNCTION_ALARMS.period },
            },
          }),
      addThrottlesCountAlarm: {
        Critical: { maxErrorCount: FUNCTION_ALARMS.maxThrottles, period: FUNCTION_ALARMS.period },
      },
    });
    const made = facade.createdAlarms().slice(before);
    const errors = live
      ? live.errorAlarm
      : made.find((alarm) => alarm.alarmName.includes('-Fault-') || alarm.alarmName.endsWith('Fault'))?.alarm;
    const throttles = made.find((alarm) => alarm.alarmName.includes('Throttle'));
    if (!errors || !throttles) throw new Error(`alarms of ${fn.node.path}: ${made.map((a) => a.alarmName).join(', ')}`);
    if (live && topic) {
      live.errorAlarm.addAlarmAction(new SnsAction(topic));
      live.errorAlarm.addOkAction(new SnsAction(topic));
    }
    registry.set(fn, { errors, throttles: throttles.alarm });
  }
}

/** The error alarm `watchFunctions` made for `fn` (what a CodeDeploy canary rolls back on). */
export function errorAlarmOf(fn: IFunction): IAlarm {
  const alarms = registry.get(fn);
  if (!alarms) throw new Error(`${fn.node.path} has no alarms yet: call watchFunctions for it first`);
  return alarms.errors;
}

/** Both alarms of `fn`. */
export function alarmsOf(fn: IFunction): FunctionAlarms | undefined {
  return registry.get(fn);
}
