/**
 * What watches the service (issue 25.2), made with cdk-monitoring-constructs: the alarms of the shared resources
 * (HTTP API, WebSocket API, queues, tables, the stream consumer, the functions outside the area stacks) and the
 * stage's dashboard: the golden signals per area from the per-operation metrics the functions publish (namespace
 * `Dispatch`), the capacity units they report, and the resources above. The alarm topic is DispatchData's (every
 * stack depends on that one); the area stacks alarm on their own functions (lib/constructs/alarms.ts) and notify it
 * too. Every threshold and its reason: docs/monitoring.md.
 */
import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { ComparisonOperator, MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { DefaultDashboardFactory, MonitoringFacade, SnsAlarmActionStrategy } from 'cdk-monitoring-constructs';
import type { Construct } from 'constructs';
import { alarmFacade, watchFunctions } from '#lib/constructs/alarms';
import { DispatchFunction } from '#lib/constructs/dispatch-function';
import type { DataStack } from '#lib/stacks/data-stack';
import type { RealtimeStack } from '#lib/stacks/realtime-stack';
import type { WorkersStack } from '#lib/stacks/workers-stack';
import { alarmNamePrefix, stageOf } from '#lib/stage';
import type { Area, RouteDef } from '#shared/routes';

/** Thresholds of the shared resources' alarms; each reason is in docs/monitoring.md. */
export const ALARMS = {
  /** HTTP API 5xx answers over 5 minutes: the contract never answers 5xx on purpose (problem+json 4xx instead). */
  httpMax5xx: 5,
  /** HTTP API p99 latency, three 5-minute periods in a row: far above the bench's p99 (docs/scale.md), below the 29 s timeout. */
  httpMaxP99: Duration.seconds(3),
  httpP99Periods: 3,
  /** WebSocket integration errors over 5 minutes: a route function failed or was throttled. */
  webSocketMaxIntegrationErrors: 0,
  /** Dead letters waiting (work dead-letter queue, asynchronous failures): any is work lost until someone acts. */
  maxDeadLetters: 0,
  /** Age of the oldest queued work: two worker timeouts (2 × 900 s) means the worker falls behind or fails. */
  maxQueuedAge: Duration.minutes(30),
  /** DynamoDB throttled requests (read or write) over 5 minutes, per table. */
  maxTableThrottles: 10,
  /** DynamoDB system errors (HTTP 500 from DynamoDB) over 5 minutes, per table. */
  maxTableSystemErrors: 0,
  /** Iterator age of the live positions consumer: its records expire after a minute (maxRecordAge). */
  maxIteratorAge: Duration.seconds(30),
} as const;

/** The namespace and fixed dimension of the per-operation metrics (shared/metrics.ts, Powertools EMF). */
export const SERVICE_METRICS = { namespace: 'Dispatch', service: 'dispatch' } as const;

export interface MonitoringStackProps extends StackProps {
  data: DataStack;
  httpApi: HttpApi;
  realtime: RealtimeStack;
  workers: WorkersStack;
  /** Stacks whose functions this stack alarms on (those outside the area stacks). */
  watched: readonly Stack[];
  /** The route table by area: the dashboard's sections. */
  areas: ReadonlyMap<Area, readonly RouteDef[]>;
}

export class MonitoringStack extends Stack {
  /** Every alarm of the stage notifies this topic (DispatchData's: every stack can name it). */
  readonly alarmTopic: ITopic;
  readonly dashboardFacade: MonitoringFacade;

  constructor(scope: Construct, id: string, props: MonitoringStackProps) {
    super(scope, id, props);
    const stage = stageOf(this);
    const { data, realtime, workers } = props;

    this.alarmTopic = data.alarmTopic;

    const action = new SnsAlarmActionStrategy({ onAlarmTopic: this.alarmTopic, onOkTopic: this.alarmTopic });
    const facade = new MonitoringFacade(this, 'Monitoring', {
      alarmFactoryDefaults: {
        actionsEnabled: true,
        action,
        alarmNamePrefix: alarmNamePrefix(stage),
        datapointsToAlarm: 1,
        evaluationPeriods: 1,
      },
      metricFactoryDefaults: {},
      dashboardFactory: new DefaultDashboardFactory(this, 'Dashboards', {
        dashboardNamePrefix: `Dispatch-${stage.name}`,
        createDashboard: true,
        createSummaryDashboard: false,
        createAlarmDashboard: false,
      }),
    });
    this.dashboardFacade = facade;

    facade.addLargeHeader(`Dispatch (${stage.name})`);
    facade.monitorApiGatewayV2HttpApi({
      api: props.httpApi,
      apiStage: '$default',
      alarmFriendlyName: 'HttpApi',
      humanReadableName: 'HTTP API',
      add5xxCountAlarm: { Critical: { maxErrorCount: ALARMS.httpMax5xx } },
      addLatencyP99Alarm: {
        Critical: {
          maxLatency: ALARMS.httpMaxP99,
          datapointsToAlarm: ALARMS.httpP99Periods,
          evaluationPeriods: ALARMS.httpP99Periods,
        },
      },
    });
    this.serviceSaturation(facade);
    for (const [area, routes] of props.areas) this.areaSignals(facade, area, routes);

    const webSocketApiId = realtime.stage.api.apiId;
    const ws = (metricName: string) =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: { ApiId: webSocketApiId, Stage: realtime.stage.stageName },
        statistic: 'Sum',
        period: Duration.minutes(5),
      });
    facade.monitorCustom({
      alarmFriendlyName: 'WebSocket',
      humanReadableName: 'WebSocket API (live stage)',
      metricGroups: [
        {
          title: 'Connections and messages',
          metrics: [ws('ConnectCount'), ws('MessageCount')],
        },
        {
          title: 'Errors',
          metrics: [
            {
              metric: ws('IntegrationError'),
              alarmFriendlyName: 'WebSocket-IntegrationErrors',
              addAlarm: {
                Critical: {
                  threshold: ALARMS.webSocketMaxIntegrationErrors,
                  comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
                },
              },
            },
            ws('ClientError'),
            ws('ExecutionError'),
          ],
        },
      ],
    });

    const deadLetters = data.workQueue.deadLetterQueue!.queue;
    facade.monitorSqsQueueWithDlq({
      queue: data.workQueue,
      deadLetterQueue: deadLetters,
      alarmFriendlyName: 'WorkQueue',
      humanReadableName: 'Work queue (webhooks, imports, planning)',
      addQueueMaxMessageAgeAlarm: { Critical: { maxAgeInSeconds: ALARMS.maxQueuedAge.toSeconds() } },
      addDeadLetterQueueMaxSizeAlarm: { Critical: { maxMessageCount: ALARMS.maxDeadLetters } },
    });
    facade.monitorSqsQueue({
      queue: workers.asyncFailures,
      alarmFriendlyName: 'AsyncFailures',
      humanReadableName: 'Failed asynchronous invocations (S3 trigger, sweep)',
      addQueueMaxSizeAlarm: { Critical: { maxMessageCount: ALARMS.maxDeadLetters } },
    });

    for (const [name, table] of [
      ['Main', data.mainTable],
      ['Idempotency', data.idempotencyTable],
      ['Locations', data.locationsTable],
      ['Connections', data.connectionsTable],
    ] as const) {
      facade.monitorDynamoTable({
        table,
        alarmFriendlyName: `${name}Table`,
        humanReadableName: `${name} table`,
        addReadThrottledEventsCountAlarm: { Critical: { maxThrottledEventsThreshold: ALARMS.maxTableThrottles } },
        addWriteThrottledEventsCountAlarm: { Critical: { maxThrottledEventsThreshold: ALARMS.maxTableThrottles } },
        addSystemErrorCountAlarm: { Critical: { maxErrorCount: ALARMS.maxTableSystemErrors } },
      });
    }

    const positions = realtime.node
      .findAll()
      .find(
        (c): c is DispatchFunction => c instanceof DispatchFunction && c.handlerPath === 'realtime/positions-stream',
      )!;
    facade.monitorLambdaFunction({
      lambdaFunction: positions,
      alarmFriendlyName: 'PositionsStream',
      humanReadableName: 'Live positions consumer (locations stream)',
      addMaxIteratorAgeAlarm: { Critical: { maxAgeInMillis: ALARMS.maxIteratorAge.toMilliseconds() } },
    });

    // The functions outside the area stacks: error and throttle alarms, not on the dashboard (their areas are). A
    // function behind `live` (the authorizer, the 404 function, the WebSocket routes) pages through its canary alarm,
    // in its own stack, which names the topic of DispatchData (issue 35 item 5).
    const alarms = alarmFacade(this, 'FunctionAlarms', stage, this.alarmTopic);
    for (const stack of props.watched) {
      const fns = stack.node.findAll().filter((c): c is DispatchFunction => c instanceof DispatchFunction);
      watchFunctions(alarms, stack.node.id.replace(/^Dispatch/, ''), fns, this.alarmTopic);
    }
  }

  /** Lambda concurrency and throttles for the account and region: the service's saturation. */
  private serviceSaturation(facade: MonitoringFacade) {
    const lambda = (metricName: string, statistic: string) =>
      new Metric({ namespace: 'AWS/Lambda', metricName, statistic, period: Duration.minutes(5) });
    facade.monitorCustom({
      alarmFriendlyName: 'Saturation',
      humanReadableName: 'Saturation: Lambda (account and region)',
      metricGroups: [
        { title: 'Concurrent executions (max)', metrics: [lambda('ConcurrentExecutions', 'Maximum')] },
        { title: 'Throttles', metrics: [lambda('Throttles', 'Sum')] },
      ],
    });
  }

  /**
   * One area's golden signals from the metrics its functions publish per operation (shared/metrics.ts): traffic
   * (requests: Latency's SampleCount), errors (5xx and 4xx answers), latency (the worst operation's p99) and the DynamoDB capacity units the
   * requests consumed (the service's cost and its tables' saturation).
   */
  private areaSignals(facade: MonitoringFacade, area: Area, routes: readonly RouteDef[]) {
    const period = Duration.minutes(5);
    const metric = (route: RouteDef, metricName: string, statistic: string) =>
      new Metric({
        namespace: SERVICE_METRICS.namespace,
        metricName,
        dimensionsMap: { service: SERVICE_METRICS.service, operation: route.id },
        statistic,
        period,
      });
    const over = (fn: 'SUM' | 'MAX', metricName: string, statistic: string, label: string) => {
      const usingMetrics = Object.fromEntries(
        routes.map((route, i) => [`${metricName.toLowerCase()}${i}`, metric(route, metricName, statistic)] as const),
      );
      return new MathExpression({
        expression: `${fn}([${Object.keys(usingMetrics).join(',')}])`,
        usingMetrics,
        label,
        period,
      });
    };
    facade.monitorCustom({
      alarmFriendlyName: `Area-${area}`,
      humanReadableName: `Area ${area}: ${routes.map((route) => route.id).join(' ')}`,
      metricGroups: [
        // A request is one Latency sample: no metric of its own to pay for (shared/metrics.ts).
        { title: 'Traffic: requests', metrics: [over('SUM', 'Latency', 'SampleCount', 'requests')] },
        {
          title: 'Errors: answers',
          metrics: [
            over('SUM', 'ServerErrors', 'Sum', '5xx answers'),
            over('SUM', 'ClientErrors', 'Sum', '4xx answers'),
          ],
        },
        { title: 'Latency: worst operation p99 (ms)', metrics: [over('MAX', 'Latency', 'p99', 'p99')] },
        {
          title: 'Capacity units consumed',
          metrics: [
            over('SUM', 'RCU', 'Sum', 'read capacity units'),
            over('SUM', 'WCU', 'Sum', 'write capacity units'),
          ],
        },
      ],
    });
  }
}
