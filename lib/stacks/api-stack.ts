/**
 * The front door: the HTTP API with CORS, the Lambda authorizer every protected route uses, and a `$default` route
 * answering problem+json 404. Area stacks add their routes to this API; its stage (throttles, access logs) is
 * DispatchGateway's (lib/stacks/gateway-stack.ts), made after every route.
 */
import { Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import {
  AuthorizerPayloadVersion,
  CorsHttpMethod,
  HttpApi,
  HttpAuthorizer,
  HttpAuthorizerType,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Trigger } from 'aws-cdk-lib/triggers';
import type { Construct } from 'constructs';
import { bundlingWithFiles, DispatchFunction } from '#lib/constructs/dispatch-function';
import { applyNeeds } from '#lib/constructs/grants';
import { SafeDeploys } from '#lib/constructs/safe-deploy';
import { buildReferenceDocument, REFERENCE_DOCUMENT } from '#lib/reference-build';
import type { DataStack } from '#lib/stacks/data-stack';
import { stageOf } from '#lib/stage';
import { AUTHORIZER_TIMEOUT_S, background } from '#shared/functions';
import { CORS_HEADERS } from '#shared/http/responses';
import { DOCS_ASSETS } from '#shared/reference/page';

/**
 * The HTTP API's access-log line: HTTP API variables only (REST's `$context.resourcePath` is none of them), with
 * what an operator asks first of a failed request: which route, which integration or authorizer error, how long
 * API Gateway and the function each took. Every request writes one (~877 M a month for the reference fleet, priced
 * by the byte: bench/cost-model.ts), so it holds nothing twice and nothing an operator does not use; each field
 * left out and why, and the bytes of a typical line, in docs/monitoring.md ("The HTTP API's access log"). Short
 * keys: `fn…` is the integration (always a function here), `auth…` the Lambda authorizer, `gwError` API
 * Gateway's own error type (THROTTLED, AUTHORIZER_FAILURE, INTEGRATION_TIMEOUT, …).
 */
export const HTTP_ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  time: '$context.requestTimeEpoch',
  ip: '$context.identity.sourceIp',
  ua: '$context.identity.userAgent',
  method: '$context.httpMethod',
  route: '$context.routeKey',
  path: '$context.path',
  status: '$context.status',
  latency: '$context.responseLatency',
  fnStatus: '$context.integrationStatus',
  fnLatency: '$context.integrationLatency',
  fnError: '$context.integrationErrorMessage',
  authStatus: '$context.authorizer.status',
  authError: '$context.authorizer.error',
  gwError: '$context.error.responseType',
});

/** How long API Gateway keeps the authorizer's answer for one Authorization header (at most 3600 s). */
export const AUTHORIZER_CACHE_TTL = Duration.seconds(300);

export interface ApiStackProps extends StackProps {
  data: DataStack;
  adminEmail: string;
  mailFrom: string;
}

/** The public routes of the API reference and health check, by construct id (test/infra/reference.test.ts). */
export const REFERENCE_ROUTES = [
  ['HealthRoute', '/health'],
  ['OpenApiRoute', '/openapi.json'],
  ['DocsRoute', '/docs'],
  ['DocsAssetRoute', '/docs/assets/{file}'],
] as const;

export class ApiStack extends Stack {
  readonly httpApi: HttpApi;
  readonly authorizerId: string;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const { data } = props;
    const stage = stageOf(this);

    this.httpApi = new HttpApi(this, 'HttpApi', {
      apiName: `dispatch-${stage.name}`,
      createDefaultStage: false,
      corsPreflight: {
        allowOrigins: ['*'],
        allowMethods: [CorsHttpMethod.ANY],
        allowHeaders: CORS_HEADERS['Access-Control-Allow-Headers'].split(', '),
        exposeHeaders: ['X-Request-Id', 'Retry-After', 'Allow'],
        maxAge: Duration.minutes(10),
      },
    });

    const needs = { data, mailFrom: props.mailFrom, adminEmail: props.adminEmail };
    const authorizerFn = new DispatchFunction(this, 'AuthorizerFn', {
      handlerPath: 'auth/authorizer',
      timeout: Duration.seconds(AUTHORIZER_TIMEOUT_S),
    });
    applyNeeds(authorizerFn, background('auth/authorizer'), needs);
    // Every protected request runs it: it deploys behind `live` by canary like the route functions.
    const authorizerLive = SafeDeploys.of(this).publish(authorizerFn).alias;
    // The authorizer only verifies the ES256 JWT and annotates rather than denies, so that the function answers a bad
    // token with problem+json 401. API Gateway caches its answer per Authorization header for AUTHORIZER_CACHE_TTL
    // (one function invocation per request in steady state); a request without the header gets API Gateway's own
    // 401 {"message":"Unauthorized"} without any function running. Revocation (token generation) is checked by the
    // handler kit (shared/http/endpoint.ts), which also re-checks `exp`. HTTP APIs' JWT authorizer would need no
    // function at all but supports only RSA algorithms, and the contract pins ES256.
    const authorizer = new HttpAuthorizer(this, 'Authorizer', {
      httpApi: this.httpApi,
      authorizerName: 'dispatch-bearer',
      type: HttpAuthorizerType.LAMBDA,
      identitySource: ['$request.header.Authorization'],
      authorizerUri: `arn:${this.partition}:apigateway:${this.region}:lambda:path/2015-03-31/functions/${authorizerLive.functionArn}/invocations`,
      enableSimpleResponses: true,
      payloadFormatVersion: AuthorizerPayloadVersion.VERSION_2_0,
      resultsCacheTtl: AUTHORIZER_CACHE_TTL,
    });
    authorizerLive.addPermission('InvokedByApiGateway', {
      principal: new ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: this.formatArn({
        service: 'execute-api',
        resource: this.httpApi.apiId,
        resourceName: 'authorizers/*',
      }),
    });
    this.authorizerId = authorizer.authorizerId;

    // Whatever matches no operation gets the contract's problem+json (405 with Allow for a known path, else 404)
    // instead of API Gateway's own body.
    const notFoundFn = new DispatchFunction(this, 'NotFoundFn', { handlerPath: 'system/not-found' });
    applyNeeds(notFoundFn, background('system/not-found'), needs);
    const notFoundLive = SafeDeploys.of(this).publish(notFoundFn).alias;
    new HttpRoute(this, 'DefaultRoute', {
      httpApi: this.httpApi,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('NotFoundIntegration', notFoundLive),
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-APIG4',
      reason:
        'The $default route only answers 404 (or 405) for requests that are no operation; it reads and returns nothing.',
    });

    // The API reference and health check (public, issue 42 item 12): what the local host answers on the same paths.
    const reference = new DispatchFunction(this, 'ReferenceFn', {
      handlerPath: 'system/reference',
      description: 'GET /health, /openapi.json, /docs and its assets',
      memorySize: 512,
      // The Swagger UI's files, and the OpenAPI document generated first (lib/reference-build.ts).
      bundling: bundlingWithFiles(
        'docs-assets',
        {
          ...Object.fromEntries(Object.keys(DOCS_ASSETS).map((name) => [name, `node_modules/swagger-ui-dist/${name}`])),
          'openapi.json': REFERENCE_DOCUMENT,
        },
        () => buildReferenceDocument(),
      ),
    });
    applyNeeds(reference, background('system/reference'), needs);
    const referenceIntegration = new HttpLambdaIntegration(
      'ReferenceIntegration',
      SafeDeploys.of(this).publish(reference).alias,
    );
    for (const [id, path] of REFERENCE_ROUTES) {
      new HttpRoute(this, id, {
        httpApi: this.httpApi,
        routeKey: HttpRouteKey.with(path, HttpMethod.GET),
        integration: referenceIntegration,
      });
    }
    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-APIG4',
      reason: 'GET /health, /openapi.json and /docs are public (API.md 5): they read and return no data of anyone.',
    });

    const seed = new DispatchFunction(this, 'SeedAdminFn', { handlerPath: 'system/seed-admin' });
    applyNeeds(seed, background('system/seed-admin'), needs);
    new Trigger(this, 'SeedAdmin', { handler: seed, executeOnHandlerChange: true });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4',
      reason: 'The Trigger provider uses AWSLambdaBasicExecutionRole, the AWS-maintained minimum for its own logs.',
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-L1',
      reason: 'The Trigger provider function’s runtime is chosen by aws-cdk-lib; our own functions use Node 22.',
    });
  }
}
