/**
 * One stack per area: a function for every route of that area in the route table, added to the shared HTTP API with
 * the shared authorizer (public routes with none). Splitting by area keeps each stack far below CloudFormation's
 * 500-resource limit, with each function's version, alias `live`, deployment group and error alarm (safe deploys).
 */
import { Stack, type StackProps, Validations } from 'aws-cdk-lib';
import {
  type HttpApi,
  HttpAuthorizer,
  HttpMethod,
  HttpNoneAuthorizer,
  HttpRoute,
  HttpRouteKey,
  type IHttpRouteAuthorizer,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { alarmFacade, watchFunctions } from '#lib/constructs/alarms';
import { DispatchFunction } from '#lib/constructs/dispatch-function';
import { applyNeeds } from '#lib/constructs/grants';
import { SafeDeploys } from '#lib/constructs/safe-deploy';
import { reservedConcurrency } from '#lib/constructs/throttles';
import type { DataStack } from '#lib/stacks/data-stack';
import type { RealtimeStack } from '#lib/stacks/realtime-stack';
import { stageOf } from '#lib/stage';
import { routeFunctions } from '#shared/functions';
import type { Area, RouteDef } from '#shared/routes';

export interface AreaStackProps extends StackProps {
  area: Area;
  routes: readonly RouteDef[];
  data: DataStack;
  httpApi: HttpApi;
  authorizerId: string;
  /** The verified SES sender of every mail. */
  mailFrom: string;
  realtime: RealtimeStack;
  /** The stage's alarm topic (DispatchMonitoring): the functions' error and throttle alarms notify it. */
  alarmTopic: ITopic;
}

/** `X3.read` → `X3Read`: a construct id from a spec id. */
const constructId = (id: string) =>
  id.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase());

export class AreaStack extends Stack {
  readonly functions: DispatchFunction[] = [];

  constructor(scope: Construct, id: string, props: AreaStackProps) {
    super(scope, id, props);
    const { data } = props;
    const bearer = HttpAuthorizer.fromHttpAuthorizerAttributes(this, 'Bearer', {
      authorizerId: props.authorizerId,
      authorizerType: 'CUSTOM',
    });
    const none = new HttpNoneAuthorizer();

    for (const route of props.routes) {
      const name = constructId(route.id);
      const fn = new DispatchFunction(this, `${name}Fn`, {
        handlerPath: route.handler,
        description: `${route.id} ${route.method} ${route.path}`,
        // Opt-in (-c reserveConcurrency=true): by default the route's throttle on the stage bounds it.
        reservedConcurrentExecutions: reservedConcurrency(this, route.throttle),
      });
      applyNeeds(fn, routeFunctions.find((def) => def.route === route)!, {
        data,
        realtime: props.realtime,
        mailFrom: props.mailFrom,
      });
      this.functions.push(fn);
      // The route invokes the alias `live`, which CodeDeploy moves to each new version (docs/deploy.md, Safe deploys).
      const { alias } = SafeDeploys.of(this).publish(fn);

      const authorizer: IHttpRouteAuthorizer = route.access === 'public' ? none : bearer;
      new HttpRoute(this, `${name}Route`, {
        httpApi: props.httpApi,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: new HttpLambdaIntegration(`${name}Integration`, alias),
        authorizer,
      });
    }
    // An error and a throttle alarm per function (lib/constructs/alarms.ts; errorAlarmOf(fn) for a canary).
    watchFunctions(
      alarmFacade(this, 'Alarms', stageOf(this), props.alarmTopic),
      props.area,
      this.functions,
      props.alarmTopic,
    );
    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-APIG4',
      reason:
        'Public routes (login, refresh, registration, JWKS) are public by contract; every other route has the Lambda authorizer.',
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-COG4',
      reason: 'Tokens are the service’s own ES256 JWTs checked by a Lambda authorizer, not Cognito user pools.',
    });
  }
}
