/**
 * One stack per area: a function for every route of that area in the route table, added to the shared HTTP API with
 * the shared authorizer (public routes with none). Splitting by area keeps each stack far below CloudFormation's
 * 500-resource limit.
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
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { DispatchFunction } from '#lib/constructs/dispatch-function';
import type { DataStack } from '#lib/stacks/data-stack';
import type { RealtimeStack } from '#lib/stacks/realtime-stack';
import { connectionsTable, idempotencyTable, locationsTable, mainTable } from '#shared/db/tables';
import type { Area, RouteDef } from '#shared/routes';

/** What each area's functions use beyond the tables: mail (SES), sealing secrets (KMS encrypt), the work queue. */
interface Needs {
  mail?: boolean;
  seal?: boolean;
  queue?: boolean;
  locations?: boolean;
  /** Delivers events to WebSocket subscribers. */
  realtime?: boolean;
  /** Reads (presigns) objects of the upload bucket. */
  objects?: boolean;
  /** Writes uploads and results. */
  writeObjects?: boolean;
  push?: boolean;
}

const NEEDS: Partial<Record<Area, Needs>> = {
  // A21 keeps the location's copy of the driver's service types current.
  accounts: { mail: true, locations: true },
  tokens: { seal: true, queue: true },
  locations: { locations: true },
  notifications: { realtime: true, objects: true, push: true },
  imports: { queue: true, objects: true, writeObjects: true },
  planning: { queue: true, locations: true, realtime: true, push: true },
};

export interface AreaStackProps extends StackProps {
  area: Area;
  routes: readonly RouteDef[];
  data: DataStack;
  httpApi: HttpApi;
  authorizerId: string;
  /** The verified SES sender of every mail. */
  mailFrom: string;
  realtime: RealtimeStack;
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
        environment: {
          SIGNING_KEY_SECRET_ARN: data.signingKeySecret.secretArn,
          UPLOAD_BUCKET: data.uploadBucket.bucketName,
        },
      })
        .bindTable(data.mainTable, mainTable, 'RW')
        .bindTable(data.idempotencyTable, idempotencyTable, 'RW');
      data.signingKeySecret.grantRead(fn);
      const needs = NEEDS[props.area] ?? {};
      if (needs.locations) fn.bindTable(data.locationsTable, locationsTable, 'RW');
      if (needs.realtime) {
        fn.bindTable(data.connectionsTable, connectionsTable, 'RW');
        fn.addEnvironment('WEBSOCKET_MANAGEMENT_ENDPOINT', props.realtime.stage.callbackUrl);
        fn.role!.addManagedPolicy(props.realtime.manageConnections);
      }
      if (needs.objects) fn.role!.addManagedPolicy(data.readUploads);
      if (needs.writeObjects) fn.role!.addManagedPolicy(data.writeUploads);
      if (needs.push) {
        const applications = this.node.tryGetContext('snsPlatformApplications') as Record<string, string> | undefined;
        fn.addEnvironment('SNS_PLATFORM_APPLICATIONS', JSON.stringify(applications ?? {}));
        const arns = Object.values(applications ?? {});
        if (arns.length > 0) {
          fn.addToRolePolicy(new PolicyStatement({ actions: ['sns:CreatePlatformEndpoint'], resources: arns }));
          fn.addToRolePolicy(
            new PolicyStatement({
              actions: ['sns:Publish', 'sns:DeleteEndpoint', 'sns:SetEndpointAttributes'],
              resources: arns.map((arn) => `${arn.replace(':app/', ':endpoint/')}/*`),
            }),
          );
        }
      }
      if (needs.seal) {
        fn.addEnvironment('SECRET_BOX_KMS_KEY_ID', data.secretBoxKey.keyArn);
        data.secretBoxKey.grant(fn, 'kms:Encrypt');
      }
      if (needs.queue) {
        fn.addEnvironment('WORK_QUEUE_URL', data.workQueue.queueUrl);
        data.workQueue.grantSendMessages(fn);
      }
      if (props.area === 'tokens') {
        for (const name of ['EXTERNAL_ISSUER', 'EXTERNAL_AUDIENCE', 'EXTERNAL_JWKS_URL'] as const) {
          const value = this.node.tryGetContext(name.toLowerCase());
          if (value) fn.addEnvironment(name, value);
        }
      }
      if (needs.mail) {
        fn.addEnvironment('MAIL_FROM', props.mailFrom);
        fn.addToRolePolicy(
          new PolicyStatement({
            actions: ['ses:SendEmail'],
            resources: [
              this.formatArn({ service: 'ses', resource: 'identity', resourceName: props.mailFrom.split('@')[1] }),
            ],
          }),
        );
      }
      this.functions.push(fn);

      const authorizer: IHttpRouteAuthorizer = route.access === 'public' ? none : bearer;
      new HttpRoute(this, `${name}Route`, {
        httpApi: props.httpApi,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: new HttpLambdaIntegration(`${name}Integration`, fn),
        authorizer,
      });
    }
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
