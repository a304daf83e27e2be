/** Builds every stack of the service into `app`: the data stack, the API stack, and one stack per area. */
import type { App, StackProps } from 'aws-cdk-lib';
import { mailFromProblem } from '#lib/deploy-checks';
import { ApiStack } from '#lib/stacks/api-stack';
import { AreaStack } from '#lib/stacks/area-stack';
import { DataStack } from '#lib/stacks/data-stack';
import { EDGE_REGION, EdgeStack } from '#lib/stacks/edge-stack';
import { GatewayStack } from '#lib/stacks/gateway-stack';
import { MonitoringStack } from '#lib/stacks/monitoring-stack';
import { RealtimeStack } from '#lib/stacks/realtime-stack';
import { WorkersStack } from '#lib/stacks/workers-stack';
import { stackNameFor, stageOf } from '#lib/stage';
import { type Area, type RouteDef, routes } from '#shared/routes';

/** The sender tests and local synthesis use; it can never be verified in SES, so a deploy must name its own. */
export const PLACEHOLDER_MAIL_FROM = 'no-reply@dispatch.example';

/**
 * What a deploy needs from its operator, checked before anything is built (bin/app.ts, the app `cdk deploy` runs):
 * `-c mailFrom=<address>` of an identity verified in SES in the target account and region. Without it, synthesis
 * fails with this message rather than deploying a service whose every mail SES refuses.
 */
export function requireDeployContext(app: App): void {
  const problem = mailFromProblem(app.node.tryGetContext('mailFrom'));
  if (problem) throw new Error(problem);
}

/**
 * `-c waf=true` (default false): CloudFront with an AWS WAF web ACL in front of the HTTP API, in a stack of its own
 * in us-east-1 (docs/throttling.md); `-c wafRateLimit=<n>` its requests per IP address in five minutes. The API's
 * region must be explicit, for the stack to read the API's id across regions.
 */
function edgeOption(app: App, props: StackProps) {
  const flag = String(app.node.tryGetContext('waf') ?? 'false');
  if (flag !== 'true' && flag !== 'false') throw new Error(`waf "${flag}": use true or false (docs/throttling.md).`);
  if (flag === 'false') return undefined;
  const apiRegion = props.env?.region;
  if (!apiRegion)
    throw new Error(
      '-c waf=true needs the region of the API (AWS_REGION, docs/deploy.md step 1): see docs/throttling.md.',
    );
  const rate: unknown = app.node.tryGetContext('wafRateLimit');
  const rateLimitPerIp = rate === undefined ? undefined : Number(rate);
  if (rateLimitPerIp !== undefined && !(Number.isInteger(rateLimitPerIp) && rateLimitPerIp >= 10))
    throw new Error(
      `wafRateLimit "${String(rate)}": a whole number of requests in five minutes, at least 10 (WAF's minimum).`,
    );
  return { apiRegion, rateLimitPerIp };
}

/**
 * Builds the stage's stacks (`-c stage=<name>`, default sandbox: lib/stage.ts). Construct ids stay `DispatchData`, …
 * (so `cdk deploy DispatchData` works in every stage); the CloudFormation stack names carry the stage
 * (`DispatchData-sandbox`), so that stages share an account.
 */
export function buildApp(app: App, props: StackProps = {}) {
  const mailFrom: string = app.node.tryGetContext('mailFrom') ?? PLACEHOLDER_MAIL_FROM;
  const apiGatewayAccountRole = String(app.node.tryGetContext('apiGatewayAccountRole') ?? 'true') !== 'false';
  const stage = stageOf(app);
  const edge = edgeOption(app, props);
  const named = (id: string): StackProps => ({ ...props, stackName: stackNameFor(id, stage) });
  const data = new DataStack(app, 'DispatchData', named('DispatchData'));
  const api = new ApiStack(app, 'DispatchApi', {
    ...named('DispatchApi'),
    // The edge stack (us-east-1) reads the API's id: CDK's cross-region references (SSM parameters) need this.
    ...(edge ? { crossRegionReferences: true } : {}),
    data,
    adminEmail: app.node.tryGetContext('adminEmail') ?? 'admin@dispatch.local',
    mailFrom,
  });
  const realtime = new RealtimeStack(app, 'DispatchRealtime', {
    ...named('DispatchRealtime'),
    data,
    mailFrom,
    httpApi: api.httpApi,
    apiGatewayAccountRole,
    opsTileUrl: app.node.tryGetContext('opsTileUrl'),
  });
  const areas = new Map<Area, RouteDef[]>();
  for (const route of routes as readonly RouteDef[]) areas.set(route.area, [...(areas.get(route.area) ?? []), route]);
  const workers = new WorkersStack(app, 'DispatchWorkers', { ...named('DispatchWorkers'), data, realtime, mailFrom });
  const monitoring = new MonitoringStack(app, 'DispatchMonitoring', {
    ...named('DispatchMonitoring'),
    data,
    httpApi: api.httpApi,
    realtime,
    workers,
    watched: [api, realtime, workers],
    areas,
  });
  const areaStacks = [...areas].map(([area, areaRoutes]) => {
    const id = `Dispatch${area[0]!.toUpperCase()}${area.slice(1)}`;
    return new AreaStack(app, id, {
      ...named(id),
      area,
      routes: areaRoutes,
      data,
      httpApi: api.httpApi,
      authorizerId: api.authorizerId,
      mailFrom,
      realtime,
      alarmTopic: data.alarmTopic,
    });
  });
  // The HTTP API's stage, after every stack that adds routes: its route settings name them (issue 33 item 10).
  const gateway = new GatewayStack(app, 'DispatchGateway', {
    ...named('DispatchGateway'),
    httpApi: api.httpApi,
    routes,
    routeStacks: [realtime, ...areaStacks],
  });
  const edgeStack = edge
    ? new EdgeStack(app, 'DispatchEdge', {
        ...named('DispatchEdge'),
        env: { ...props.env, region: EDGE_REGION },
        crossRegionReferences: true,
        httpApi: api.httpApi,
        apiRegion: edge.apiRegion,
        rateLimitPerIp: edge.rateLimitPerIp,
      })
    : undefined;
  edgeStack?.addStackDependency(gateway);
  return { stage, data, api, realtime, areaStacks, workers, monitoring, gateway, edge: edgeStack };
}
