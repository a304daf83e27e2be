/**
 * The WebSocket API: $connect (checks the bearer token), $disconnect, `subscribe` and $default, from the WebSocket
 * route table, over the connections table; the live positions consumer of the locations stream; the `/ops` page and
 * the recipients' `/track/{token}` page.
 * Functions that deliver events reach the connections through the stage's
 * management API (`grantManagementApiAccess`).
 */
import { Duration, RemovalPolicy, Stack, type StackProps, Token, Validations } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import type { CfnStage, IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpMethod, HttpRoute, HttpRouteKey, WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration, WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { bundlingWithFiles, DispatchFunction } from '#lib/constructs/dispatch-function';
import { applyNeeds } from '#lib/constructs/grants';
import { SafeDeploys } from '#lib/constructs/safe-deploy';
import { reservedConcurrency, routeSettings, STAGE_THROTTLE_SETTINGS } from '#lib/constructs/throttles';
import { buildConsole } from '#lib/ops/build';
import type { DataStack } from '#lib/stacks/data-stack';
import { stageOf } from '#lib/stage';
import { background, websocketFunctions } from '#shared/functions';
import { POSITIONS_BATCHING_WINDOW_S } from '#shared/notifications/positions-window';
import { DEFAULT_TILE_URL, OPS_ASSETS, opsConfig } from '#shared/ops/page';
import { type Throttle, websocketRoutes } from '#shared/routes';

/** How cdk-nag writes a value in a finding id: as itself when concrete, else as the pseudo-parameter's name. */
/**
 * The WebSocket stage's access-log line (connects, client frames, disconnects; not the frames the service posts).
 * No `eventType`: the route key says it ($connect, $disconnect, or a message's route).
 */
export const WEBSOCKET_ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  connectionId: '$context.connectionId',
  route: '$context.routeKey',
  status: '$context.status',
});

const concrete = (value: string, placeholder: string) => (Token.isUnresolved(value) ? placeholder : value);

export interface RealtimeStackProps extends StackProps {
  data: DataStack;
  mailFrom: string;
  /** The HTTP API that serves the live operations page (`GET /ops`, public). */
  httpApi: IHttpApi;
  /** The /ops map's tile URL template (`-c opsTileUrl=…`, `none` for no tiles); OpenStreetMap's without it. */
  opsTileUrl?: string;
  /**
   * Whether this stack sets API Gateway's account-wide CloudWatch Logs role (`AWS::ApiGateway::Account`), without
   * which the WebSocket stage's access logs cannot be created in an account and region that never had one. Default
   * true; `-c apiGatewayAccountRole=false` leaves an account whose role is managed elsewhere alone (docs/deploy.md).
   */
  apiGatewayAccountRole?: boolean;
}

export class RealtimeStack extends Stack {
  readonly stage: WebSocketStage;
  /** Post to and close any connection of the stage: attached to every function that delivers events. */
  readonly manageConnections: ManagedPolicy;
  /** API Gateway's account settings (the CloudWatch Logs role), when this stack sets them. */
  readonly apiGatewayAccount?: CfnAccount;

  constructor(scope: Construct, id: string, props: RealtimeStackProps) {
    super(scope, id, props);
    const { data } = props;
    const stage = stageOf(this);
    const api = new WebSocketApi(this, 'WebSocketApi', {
      apiName: `dispatch-realtime-${stage.name}`,
      routeSelectionExpression: '$request.body.action',
    });
    this.stage = new WebSocketStage(this, 'Live', {
      webSocketApi: api,
      stageName: 'live',
      autoDeploy: true,
      throttle: STAGE_THROTTLE_SETTINGS,
    });
    this.manageConnections = new ManagedPolicy(this, 'ManageConnections', {
      description: 'Post to and close the WebSocket connections of the live stage',
      statements: [
        new PolicyStatement({
          actions: ['execute-api:ManageConnections'],
          resources: [
            this.formatArn({ service: 'execute-api', resource: api.apiId, resourceName: 'live/*/@connections/*' }),
          ],
        }),
      ],
    });
    Validations.of(this.manageConnections).acknowledge({
      // cdk-nag names the finding by the resource as synthesized: the region is concrete when the stack has one.
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:${concrete(this.region, '<AWS::Region>')}:${concrete(this.account, '<AWS::AccountId>')}:<WebSocketApi34BCF99B>/live/*/@connections/*]`,
      reason: 'Connection ids are made by API Gateway at connect time; the grant is limited to this API and stage.',
    });
    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: stage.accessLogRetention });
    const cfnStage = this.stage.node.defaultChild as CfnStage;
    if (props.apiGatewayAccountRole !== false) {
      // WebSocket (and REST) stages write their access logs with the role set in API Gateway's account settings;
      // creating a stage with access logs fails where none was ever set. The setting is one per account and region,
      // so it is retained on stack deletion (another API may rely on it), as CDK's RestApi does with its own.
      const role = new Role(this, 'ApiGatewayCloudWatchRole', {
        assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
        description: 'API Gateway account setting: writes the access logs of WebSocket and REST stages',
        managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
      });
      role.applyRemovalPolicy(RemovalPolicy.RETAIN);
      Validations.of(role).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason: 'The AWS-maintained policy API Gateway’s account settings expect: create and write its own log groups.',
      });
      const account = new CfnAccount(this, 'ApiGatewayAccount', { cloudWatchRoleArn: role.roleArn });
      account.applyRemovalPolicy(RemovalPolicy.RETAIN);
      account.node.addDependency(role);
      this.stage.node.addDependency(account);
      this.apiGatewayAccount = account;
    }
    cfnStage.accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      format: WEBSOCKET_ACCESS_LOG_FORMAT,
    };

    for (const route of websocketRoutes) {
      const name = route.routeKey.replace('$', '');
      const throttle: Throttle | undefined = 'throttle' in route ? route.throttle : undefined;
      const fn = new DispatchFunction(this, `${name[0]!.toUpperCase()}${name.slice(1)}Fn`, {
        handlerPath: route.handler,
        description: `WebSocket ${route.routeKey}`,
        reservedConcurrentExecutions: reservedConcurrency(this, throttle),
      });
      applyNeeds(fn, websocketFunctions.find((def) => def.handler === route.handler)!, {
        data,
        realtime: this,
        callbackUrl: this.stage.callbackUrl,
        mailFrom: props.mailFrom,
      });
      const integration = new WebSocketLambdaIntegration(`${name}Integration`, SafeDeploys.of(this).publish(fn).alias);
      // API Gateway refuses route settings that name a route not yet made: the stage waits for the throttled ones.
      const added = api.addRoute(route.routeKey, { integration });
      if (throttle) this.stage.node.addDependency(added);
    }
    cfnStage.routeSettings = routeSettings(
      websocketRoutes.map((route) => ({
        key: route.routeKey,
        throttle: 'throttle' in route ? (route.throttle as Throttle) : undefined,
      })),
    );
    // Live positions: the locations table's stream, a window's worth of fixes per batch, one frame per subscriber.
    const positions = new DispatchFunction(this, 'PositionsStreamFn', {
      handlerPath: 'realtime/positions-stream',
      description: 'driver.location events from the locations stream',
    });
    applyNeeds(positions, background('realtime/positions-stream'), {
      data,
      realtime: this,
      callbackUrl: this.stage.callbackUrl,
      mailFrom: props.mailFrom,
    });
    positions.addEventSource(
      new DynamoEventSource(data.locationsTable, {
        startingPosition: StartingPosition.LATEST,
        batchSize: 1000,
        maxBatchingWindow: Duration.seconds(POSITIONS_BATCHING_WINDOW_S),
        reportBatchItemFailures: true,
        retryAttempts: 3,
        // Positions are current state: a record older than a minute has been overtaken by newer fixes.
        maxRecordAge: Duration.minutes(1),
        parallelizationFactor: 1,
      }),
    );

    // The live operations page (public): its HTML and the map library, the WebSocket API's URL configured in.
    const opsTileUrl = props.opsTileUrl ?? DEFAULT_TILE_URL;
    opsConfig({ OPS_TILE_URL: opsTileUrl }); // a tile URL that is not one stops the synthesis, not a browser
    const ops = new DispatchFunction(this, 'OpsPageFn', {
      handlerPath: 'system/ops',
      description: 'GET /ops, the live operations page, and GET /track/{token}, a recipient’s tracking page',
      memorySize: 256,
      environment: {
        OPS_WEBSOCKET_URL: this.stage.url.replace(/\/$/, ''),
        // The map tiles: the deployment's choice only (docs/live-operations.md); the page's CSP names its origin.
        OPS_TILE_URL: opsTileUrl,
      },
      // The console's script is bundled from lib/ops/console/ first, then copied with the page's other files.
      bundling: bundlingWithFiles(
        'ops-assets',
        Object.fromEntries(Object.entries(OPS_ASSETS).map(([name, { source }]) => [name, source])),
        buildConsole,
      ),
    });
    applyNeeds(ops, background('system/ops'), { data, realtime: this, mailFrom: props.mailFrom });
    const opsIntegration = new HttpLambdaIntegration('OpsIntegration', SafeDeploys.of(this).publish(ops).alias);
    for (const [id, path] of [
      ['OpsRoute', '/ops'],
      ['OpsAssetRoute', '/ops/assets/{file}'],
      // A recipient's tracking page (contract 4.11): static, its script asks X29 (an imports-area route).
      ['TrackingPageRoute', '/track/{token}'],
    ] as const) {
      new HttpRoute(this, id, {
        httpApi: props.httpApi,
        routeKey: HttpRouteKey.with(path, HttpMethod.GET),
        integration: opsIntegration,
      });
    }

    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-APIG4',
      reason:
        '$connect checks the bearer token itself (a 401 refuses the connection); the other routes run only on connections it admitted. GET /ops and its assets are the public page (API.md 5); it signs in through A1. GET /track/{token} is the recipients’ public page (API.md 4.11), whose data X29 answers to the token alone.',
    });
  }
}
