/**
 * The HTTP API's `$default` stage: the stage-wide throttle, each expensive or public route's own throttle from the
 * route table (issue 33 item 10), and the access logs. A stack of its own, deployed after every stack that adds
 * routes to the API (the area stacks, `/ops` in DispatchRealtime): API Gateway refuses a stage whose route settings
 * name a route the API does not have yet (docs/throttling.md).
 */
import { Stack, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { type CfnStage, HttpStage, type IHttpApi, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { routeSettings, STAGE_THROTTLE_SETTINGS } from '#lib/constructs/throttles';
import { HTTP_ACCESS_LOG_FORMAT } from '#lib/stacks/api-stack';
import { stageOf } from '#lib/stage';
import type { RouteDef } from '#shared/routes';

export interface GatewayStackProps extends StackProps {
  httpApi: IHttpApi;
  /** THE route table: the throttled routes' keys and figures. */
  routes: readonly RouteDef[];
  /** The stacks that add the API's routes: the stage is created after them. */
  routeStacks: readonly Stack[];
}

export class GatewayStack extends Stack {
  readonly stage: HttpStage;

  constructor(scope: Construct, id: string, props: GatewayStackProps) {
    super(scope, id, props);
    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: stageOf(this).accessLogRetention });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: props.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: STAGE_THROTTLE_SETTINGS,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(HTTP_ACCESS_LOG_FORMAT),
      },
    });
    (this.stage.node.defaultChild as CfnStage).routeSettings = routeSettings(
      props.routes.map((route) => ({ key: `${route.method} ${route.path}`, throttle: route.throttle })),
    );
    for (const stack of props.routeStacks) this.addStackDependency(stack);
  }
}
