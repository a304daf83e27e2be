/**
 * Every function the service deploys, with what its code needs: the route functions (their needs sit next to their
 * routes), the WebSocket route functions, and the background functions no route calls. CDK grants and configures
 * each function from `grantsOf` alone; docs/grants.md is generated from it (`npm run grants`); the IAM proof checks
 * it against what the tests record.
 */
import { type Needs, type RouteDef, routes, websocketRoutes } from '#shared/routes';

/**
 * How long an API function may run (its Lambda timeout, under API Gateway's 30 s integration limit) and how long the
 * authorizer may (API Gateway waits 10 s for a Lambda authorizer). The stacks set them; the local host enforces them.
 */
export const API_FUNCTION_TIMEOUT_S = 29;
export const AUTHORIZER_TIMEOUT_S = 10;

export interface FunctionDef {
  /** Handler module relative to functions/, without extension: the function's name in every record. */
  handler: string;
  /** `A1`, `WebSocket $connect`, `authorizer`, … */
  label: string;
  needs: Needs;
  route?: RouteDef;
}

/** Functions no HTTP route calls. Adding one is one entry here and one in the stack that wires its trigger. */
export const backgroundFunctions: readonly FunctionDef[] = [
  // Verifies bearer tokens (signature, issuer, audience, expiry); the handler kit checks revocation.
  { handler: 'auth/authorizer', label: 'authorizer', needs: { signingKey: 'verify' } },
  { handler: 'system/not-found', label: '$default (404)', needs: {} },
  {
    handler: 'auth/rotate-signing-keys',
    label: 'signing-key rotation (Secrets Manager schedule)',
    needs: {
      signingKey: 'rotate',
      unexercised: {
        'signingKey:read':
          'Secrets Manager invokes it on the rotation schedule; locally the keys are a file and nothing rotates them. test/bundles/key-rotation.test.ts runs its bundle through all four steps against the Secrets Manager stand-in.',
        'signingKey:rotate':
          'Secrets Manager invokes it on the rotation schedule; locally the keys are a file and nothing rotates them. test/bundles/key-rotation.test.ts runs its bundle through all four steps against the Secrets Manager stand-in.',
      },
    },
  },
  {
    handler: 'system/seed-admin',
    label: 'SysAdmin seed (trigger)',
    needs: {
      main: 'write',
      adminPassword: true,
      unexercised: {
        'adminPassword:read': 'The local host hands the seed its password; in the cloud the trigger reads the secret.',
      },
    },
  },
  {
    handler: 'workers/queue',
    label: 'work-queue worker',
    // Webhook deliveries (open the sealed secret, retry through the queue), import runs (files in, results out),
    // planning jobs (driver locations, offers announced on the planning's channel and to partners).
    needs: {
      main: 'write',
      indexes: ['GSI2'],
      locations: 'read',
      objects: ['read', 'results'],
      queue: true,
      secretBox: 'open',
      realtime: true,
      push: true,
    },
  },
  {
    handler: 'workers/routes',
    label: 'route-build worker (route queue)',
    // Contract 4.10: reads the build's tasks and their import jobs, writes progress and the result, adds the runsheets
    // (tasks marked, the planning's version moved), assigns a driver's runsheet as X16 does (its pair events on the
    // planning's channel and to partners: GSI2 and the queue, as X16's needs say), tells route_build.* the same way.
    // An insertion (X30, routing/live.ts) starts each live route from its driver's last fix: the locations, read.
    needs: {
      main: 'write',
      indexes: ['GSI2'],
      locations: 'read',
      queue: true,
      realtime: true,
      roadTravel: true,
    },
  },
  {
    handler: 'workers/uploads',
    label: 'S3 upload trigger',
    needs: {
      main: 'write',
      objects: ['read'],
      unexercised: {
        'objects:read':
          'Reads an object only when its ETag is not an MD5 (a multipart upload); s3rver never makes such uploads.',
      },
    },
  },
  {
    handler: 'realtime/positions-stream',
    label: 'live positions (locations stream)',
    // One subscriber lookup per organisation per batch, one token-generation read (BatchGetItem on the main table) for
    // the batch's distinct subscribers, one frame per subscriber. The event source mapping reads the stream with the
    // function's role (CDK's grant, not a call the code makes).
    needs: { main: 'read', realtime: true },
  },
  // GET /ops and its assets: the page and the map library from the bundle; no AWS call.
  { handler: 'system/ops', label: 'GET /ops (live operations page)', needs: {} },
  // GET /health, /openapi.json, /docs and the UI's files: generated from the route table and the bundle; no AWS call.
  { handler: 'system/reference', label: 'GET /health, /openapi.json, /docs (API reference)', needs: {} },
  {
    handler: 'workers/expire-offers',
    label: 'offer expiry, offer waves and mail outbox (schedule)',
    // Waves (contract 4.7): the drivers' locations, pushes to the drivers offered. GSI1: the organisations' listing,
    // through which the sweeps find each organisation's lists (shared/db/shards.ts).
    needs: {
      main: 'write',
      indexes: ['GSI1', 'GSI2', 'GSI3'],
      locations: 'read',
      queue: true,
      routeQueue: 'sendAndCount',
      realtime: true,
      push: true,
      mail: true,
      unexercised: {
        'routeQueue:send':
          'The requeue sweep hands a route build whose message was lost a new one; no test loses a route build’s message.',
        'routeQueue:count':
          'Timing: the requeue sweep counts the route queue’s waiting messages only when a route build is due to it (routing-fairness.test.ts makes one due while it waits its turn).',
      },
      // Both the queue (runsheet.unassigned to partners) and the channels (a wave's pair.broadcast and offer.new) are
      // exercised by test/e2e/dispatch-actions.test.ts's waves.
    },
  },
];

export const websocketFunctions: readonly FunctionDef[] = websocketRoutes.map((route) => ({
  handler: route.handler,
  label: `WebSocket ${route.routeKey}`,
  needs: route.needs,
}));

export const routeFunctions: readonly FunctionDef[] = (routes as readonly RouteDef[]).map((route) => ({
  handler: route.handler,
  label: route.id,
  needs: route.needs,
  route,
}));

/** A background function's definition, by handler module. */
export function background(handler: string): FunctionDef {
  const def = backgroundFunctions.find((fn) => fn.handler === handler);
  if (!def) throw new Error(`no background function ${handler} in shared/functions.ts`);
  return def;
}

export const allFunctions: readonly FunctionDef[] = [...routeFunctions, ...websocketFunctions, ...backgroundFunctions];

/** A resource as the grants name it; CDK maps each to its ARN, the IAM proof to a placeholder ARN. */
export type GrantResource =
  | { kind: 'table'; table: 'Main' | 'Locations' | 'Connections' | 'Idempotency'; index?: string }
  | { kind: 'objects'; prefix: '' | 'uploads/' | 'results/' | 'proofs/' }
  | { kind: 'workQueue' }
  | { kind: 'routeQueue' }
  | { kind: 'secretBoxKey' }
  | { kind: 'signingKeySecret' }
  | { kind: 'pageTokenSecret' }
  | { kind: 'adminPasswordSecret' }
  | { kind: 'mailIdentity' }
  | { kind: 'connections' }
  | { kind: 'pushApplications' }
  | { kind: 'pushEndpoints' }
  | { kind: 'routeMatrix' };

export interface Grant {
  /** The need it comes from, as `unexercised` names it: `main:write`, `index:GSI1`, `signingKey:fill`, … */
  name: string;
  actions: readonly string[];
  resource: GrantResource;
}

export const READ_ITEMS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:ConditionCheckItem',
] as const;
export const WRITE_ITEMS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
] as const;
/** What Powertools idempotency does with its records. */
const IDEMPOTENCY_ITEMS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'];

/**
 * Why a derived grant may go unused in a function's recorded calls: each is one code path shared by many functions,
 * which the IAM proof requires some function to exercise.
 */
export const DERIVED_REASONS = {
  'main:read':
    'The handler kit reads the caller’s user item and token generation on every authenticated request (shared/http/endpoint.ts), one code path every authenticated route shares.',
  idempotency:
    'Only a POST with an Idempotency-Key header touches the idempotency table, through the one wrapper every POST shares (shared/http/endpoint.ts); the proof requires some POST to exercise it.',
  'signingKey:fill':
    'Fills the signing-key secret on the first cold start of a fresh deployment; locally the key file is written by whichever process starts first.',
  'push:register':
    'SNS is granted only for the platform applications the CDK context names; locally the push outbox stands in and makes no AWS call, so only an account proves push.',
  'push:send':
    'SNS is granted only for the platform applications the CDK context names; locally the push outbox stands in and makes no AWS call, so only an account proves push.',
  'roadTravel:matrix':
    'Amazon Location is granted only when the CDK context turns the road model on (-c travel=amazon-location); locally the straight-line model is the only one and makes no AWS call. test/unit/road-travel.test.ts drives the adapter against a mocked client; only an account proves the grant.',
} as const;

/** The needs as the function's code has them, with what is derived rather than declared (see Needs). */
export function effectiveNeeds(fn: FunctionDef): Needs {
  const needs: Needs = { ...fn.needs };
  const derived: Record<string, string> = {};
  // The handler kit reads the caller's user item (token generation) on every authenticated request.
  if (fn.route && fn.route.access !== 'public' && !needs.main) {
    needs.main = 'read';
    derived['main:read'] = DERIVED_REASONS['main:read'];
  }
  if (fn.route?.method === 'POST') derived['idempotency'] = DERIVED_REASONS.idempotency;
  if (needs.signingKey === 'sign') derived['signingKey:fill'] = DERIVED_REASONS['signingKey:fill'];
  if (needs.push) {
    derived['push:register'] = DERIVED_REASONS['push:register'];
    derived['push:send'] = DERIVED_REASONS['push:send'];
  }
  if (needs.roadTravel) derived['roadTravel:matrix'] = DERIVED_REASONS['roadTravel:matrix'];
  if (Object.keys(derived).length > 0) needs.unexercised = { ...derived, ...needs.unexercised };
  return needs;
}

/** The function's grants: the one derivation from needs to IAM, for CDK, the docs and the proof. */
export function grantsOf(fn: FunctionDef): Grant[] {
  const needs = effectiveNeeds(fn);
  const grants: Grant[] = [];
  const table = (name: string, t: 'Main' | 'Locations' | 'Connections', access: 'read' | 'write' | undefined) => {
    if (!access) return;
    grants.push({
      name: `${name}:${access}`,
      actions: access === 'read' ? READ_ITEMS : [...READ_ITEMS, ...WRITE_ITEMS],
      resource: { kind: 'table', table: t },
    });
  };
  table('main', 'Main', needs.main);
  for (const index of needs.indexes ?? []) {
    grants.push({
      name: `index:${index}`,
      actions: ['dynamodb:Query'],
      resource: { kind: 'table', table: 'Main', index },
    });
  }
  table('locations', 'Locations', needs.locations);
  for (const index of needs.locationIndexes ?? []) {
    grants.push({
      name: `index:${index}`,
      actions: ['dynamodb:Query'],
      resource: { kind: 'table', table: 'Locations', index },
    });
  }
  table('connections', 'Connections', needs.realtime ? 'write' : needs.connections);
  if (needs.realtime) {
    grants.push({
      name: 'realtime:post',
      actions: ['execute-api:ManageConnections'],
      resource: { kind: 'connections' },
    });
  }
  if (fn.route?.method === 'POST') {
    grants.push({
      name: 'idempotency',
      actions: IDEMPOTENCY_ITEMS,
      resource: { kind: 'table', table: 'Idempotency' },
    });
  }
  for (const use of needs.objects ?? []) {
    grants.push(
      use === 'read'
        ? { name: 'objects:read', actions: ['s3:GetObject'], resource: { kind: 'objects', prefix: '' } }
        : use === 'readProofs'
          ? { name: 'objects:readProofs', actions: ['s3:GetObject'], resource: { kind: 'objects', prefix: 'proofs/' } }
          : { name: `objects:${use}`, actions: ['s3:PutObject'], resource: { kind: 'objects', prefix: `${use}/` } },
    );
  }
  if (needs.queue) {
    grants.push({ name: 'queue:send', actions: ['sqs:SendMessage'], resource: { kind: 'workQueue' } });
  }
  if (needs.routeQueue) {
    grants.push({ name: 'routeQueue:send', actions: ['sqs:SendMessage'], resource: { kind: 'routeQueue' } });
    if (needs.routeQueue === 'sendAndCount')
      grants.push({
        name: 'routeQueue:count',
        actions: ['sqs:GetQueueAttributes'],
        resource: { kind: 'routeQueue' },
      });
  }
  if (needs.secretBox) {
    grants.push({
      name: `secretBox:${needs.secretBox}`,
      actions: [needs.secretBox === 'seal' ? 'kms:Encrypt' : 'kms:Decrypt'],
      resource: { kind: 'secretBoxKey' },
    });
  }
  if (needs.signingKey) {
    grants.push({
      name: 'signingKey:read',
      actions: ['secretsmanager:GetSecretValue'],
      resource: { kind: 'signingKeySecret' },
    });
  }
  if (needs.signingKey === 'rotate') {
    grants.push({
      name: 'signingKey:rotate',
      actions: [
        'secretsmanager:DescribeSecret',
        'secretsmanager:PutSecretValue',
        'secretsmanager:UpdateSecretVersionStage',
      ],
      resource: { kind: 'signingKeySecret' },
    });
  }
  if (needs.signingKey === 'sign') {
    grants.push({
      name: 'signingKey:fill',
      actions: ['secretsmanager:PutSecretValue'],
      resource: { kind: 'signingKeySecret' },
    });
  }
  if (needs.pageTokens) {
    grants.push({
      name: 'pageTokens:read',
      actions: ['secretsmanager:GetSecretValue'],
      resource: { kind: 'pageTokenSecret' },
    });
  }
  if (needs.adminPassword) {
    grants.push({
      name: 'adminPassword:read',
      actions: ['secretsmanager:GetSecretValue'],
      resource: { kind: 'adminPasswordSecret' },
    });
  }
  if (needs.mail) grants.push({ name: 'mail', actions: ['ses:SendEmail'], resource: { kind: 'mailIdentity' } });
  if (needs.push) {
    grants.push({
      name: 'push:register',
      actions: ['sns:CreatePlatformEndpoint'],
      resource: { kind: 'pushApplications' },
    });
    grants.push({
      name: 'push:send',
      actions: ['sns:Publish', 'sns:DeleteEndpoint', 'sns:SetEndpointAttributes'],
      resource: { kind: 'pushEndpoints' },
    });
  }
  if (needs.roadTravel) {
    grants.push({
      name: 'roadTravel:matrix',
      actions: ['geo-routes:CalculateRouteMatrix'],
      resource: { kind: 'routeMatrix' },
    });
  }
  return grants;
}

/** The environment variables a function's needs call for (values are the stack's). */
export function environmentOf(fn: FunctionDef): string[] {
  const needs = effectiveNeeds(fn);
  const names: string[] = [];
  if (needs.main || needs.indexes) names.push('MAIN_TABLE');
  if (needs.locations || needs.locationIndexes) names.push('LOCATIONS_TABLE');
  if (needs.realtime || needs.connections) names.push('CONNECTIONS_TABLE', 'WEBSOCKET_MANAGEMENT_ENDPOINT');
  if (fn.route?.method === 'POST') names.push('IDEMPOTENCY_TABLE');
  if (needs.objects?.length) names.push('UPLOAD_BUCKET');
  if (needs.queue) names.push('WORK_QUEUE_URL');
  if (needs.routeQueue) names.push('ROUTE_QUEUE_URL');
  if (needs.secretBox) names.push('SECRET_BOX_KMS_KEY_ID');
  if (needs.signingKey) names.push('SIGNING_KEY_SECRET_ARN');
  if (needs.pageTokens) names.push('PAGE_TOKEN_SECRET_ARN');
  if (needs.adminPassword) names.push('ADMIN_PASSWORD_SECRET_ARN', 'DISPATCH_ADMIN_EMAIL');
  if (needs.mail) names.push('MAIL_FROM');
  if (needs.push) names.push('SNS_PLATFORM_APPLICATIONS');
  if (needs.roadTravel) names.push('TRAVEL_MODEL');
  return names;
}
