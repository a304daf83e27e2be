/**
 * From a function's declared needs (shared/functions.ts) to its role and environment: the one place CDK turns needs
 * into IAM statements. Nothing else grants a service function anything.
 */
import { Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import type { DispatchFunction } from '#lib/constructs/dispatch-function';
import type { DataStack } from '#lib/stacks/data-stack';
import { environmentOf, type FunctionDef, type GrantResource, grantsOf } from '#shared/functions';
import { DEFAULT_TRAVEL_MODEL, isTravelModel, TRAVEL_MODELS, type TravelModel } from '#shared/routing/travel-model';

/**
 * What a grant or a variable can name of the WebSocket API (lib/stacks/realtime-stack.ts holds it): the policy that
 * posts to and closes connections, and the stage whose callback URL the functions are given.
 */
export interface RealtimeResources {
  readonly manageConnections: IManagedPolicy;
  readonly stage: { readonly callbackUrl: string };
}

/** What the stacks hold that a grant or a variable can name. */
export interface ServiceResources {
  data: DataStack;
  /** Absent while the realtime stack itself is being built (its functions get the callback URL from their stage). */
  realtime?: RealtimeResources;
  callbackUrl?: string;
  mailFrom: string;
  adminEmail?: string;
}

/**
 * The deployment's travel model (`-c travel=<model>`, docs/configuration.md): `straight-line` (the default) or
 * `amazon-location` (road travel times, docs/routing.md). A value that names no model fails the synth.
 */
export function travelModelOf(scope: IConstruct): TravelModel {
  const value: unknown = scope.node.tryGetContext('travel') ?? DEFAULT_TRAVEL_MODEL;
  if (!isTravelModel(value))
    throw new Error(
      `-c travel=${String(value)}: the travel model is one of ${TRAVEL_MODELS.join(', ')} (docs/routing.md)`,
    );
  return value;
}

export function applyNeeds(fn: DispatchFunction, def: FunctionDef, resources: ServiceResources): void {
  const { data } = resources;
  const stack = Stack.of(fn);
  const tables: Record<string, ITable> = {
    Main: data.mainTable,
    Locations: data.locationsTable,
    Connections: data.connectionsTable,
    Idempotency: data.idempotencyTable,
  };
  const applications =
    (stack.node.tryGetContext('snsPlatformApplications') as Record<string, string> | undefined) ?? {};
  const roads = travelModelOf(stack) === 'amazon-location';
  const arnsOf = (resource: GrantResource): string[] | 'managed' => {
    switch (resource.kind) {
      case 'table': {
        const arn = tables[resource.table]!.tableArn;
        return [resource.index ? `${arn}/index/${resource.index}` : arn];
      }
      case 'objects':
      case 'connections':
        return 'managed';
      case 'workQueue':
        return [data.workQueue.queueArn];
      case 'routeQueue':
        return [data.routeQueue.queueArn];
      case 'secretBoxKey':
        return [data.secretBoxKey.keyArn];
      case 'signingKeySecret':
        return [data.signingKeySecret.secretArn];
      case 'pageTokenSecret':
        return [data.pageTokenSecret.secretArn];
      case 'adminPasswordSecret':
        return [data.adminPasswordSecret.secretArn];
      case 'mailIdentity':
        return [
          stack.formatArn({ service: 'ses', resource: 'identity', resourceName: resources.mailFrom.split('@')[1] }),
        ];
      case 'pushApplications':
        return Object.values(applications);
      case 'pushEndpoints':
        return Object.values(applications).map((arn) => `${arn.replace(':app/', ':endpoint/')}/*`);
      case 'routeMatrix':
        // Amazon Location's routes have no resource of the account's: the provider is AWS's own (`provider/default`).
        return roads
          ? [stack.formatArn({ service: 'geo-routes', account: '', resource: 'provider', resourceName: 'default' })]
          : [];
    }
  };
  for (const grant of grantsOf(def)) {
    const arns = arnsOf(grant.resource);
    if (arns === 'managed') {
      // Object keys and connection ids are made at run time: these grants are the data and realtime stacks'
      // managed policies, each limited to one bucket (and prefixes) or one stage, and acknowledged there.
      if (grant.resource.kind === 'connections') fn.role!.addManagedPolicy(resources.realtime!.manageConnections);
      else if (grant.name === 'objects:read') fn.role!.addManagedPolicy(data.readUploads);
      else if (grant.name === 'objects:uploads') fn.role!.addManagedPolicy(data.writeUploads);
      else if (grant.name === 'objects:results') fn.role!.addManagedPolicy(data.writeResults);
      else if (grant.name === 'objects:proofs') fn.role!.addManagedPolicy(data.writeProofs);
      else if (grant.name === 'objects:readProofs') fn.role!.addManagedPolicy(data.readProofs);
      continue;
    }
    // Push is granted only for the platform applications the context names (none: no SNS statement at all), road
    // travel only with the road model on.
    if (arns.length === 0) continue;
    fn.addToRolePolicy(new PolicyStatement({ actions: [...grant.actions], resources: arns }));
  }
  // A variable whose value is undefined is not set: the code's default holds (TRAVEL_MODEL: the straight line).
  const values: Record<string, () => string | undefined> = {
    MAIN_TABLE: () => data.mainTable.tableName,
    LOCATIONS_TABLE: () => data.locationsTable.tableName,
    CONNECTIONS_TABLE: () => data.connectionsTable.tableName,
    IDEMPOTENCY_TABLE: () => data.idempotencyTable.tableName,
    WEBSOCKET_MANAGEMENT_ENDPOINT: () => resources.callbackUrl ?? resources.realtime!.stage.callbackUrl,
    UPLOAD_BUCKET: () => data.uploadBucket.bucketName,
    WORK_QUEUE_URL: () => data.workQueue.queueUrl,
    ROUTE_QUEUE_URL: () => data.routeQueue.queueUrl,
    SECRET_BOX_KMS_KEY_ID: () => data.secretBoxKey.keyArn,
    SIGNING_KEY_SECRET_ARN: () => data.signingKeySecret.secretArn,
    PAGE_TOKEN_SECRET_ARN: () => data.pageTokenSecret.secretArn,
    ADMIN_PASSWORD_SECRET_ARN: () => data.adminPasswordSecret.secretArn,
    DISPATCH_ADMIN_EMAIL: () => resources.adminEmail ?? 'admin@dispatch.local',
    MAIL_FROM: () => resources.mailFrom,
    SNS_PLATFORM_APPLICATIONS: () => JSON.stringify(applications),
    TRAVEL_MODEL: () => (roads ? 'amazon-location' : undefined),
  };
  for (const name of environmentOf(def)) {
    const value = values[name]!();
    if (value !== undefined) fn.addEnvironment(name, value);
  }
  if (def.needs.externalIdentity) {
    for (const name of ['EXTERNAL_ISSUER', 'EXTERNAL_AUDIENCE', 'EXTERNAL_JWKS_URL'] as const) {
      const value = stack.node.tryGetContext(name.toLowerCase());
      if (value) fn.addEnvironment(name, value);
    }
  }
}
