/** Builds every stack of the service into `app`: the data stack, the API stack, and one stack per area. */
import type { App, StackProps } from 'aws-cdk-lib';
import { ApiStack } from '#lib/stacks/api-stack';
import { AreaStack } from '#lib/stacks/area-stack';
import { DataStack } from '#lib/stacks/data-stack';
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
  const mailFrom: unknown = app.node.tryGetContext('mailFrom');
  if (typeof mailFrom !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(mailFrom)) {
    throw new Error(
      'Set the sender of the service mail: cdk deploy -c mailFrom=no-reply@your-domain.example (an address or domain ' +
        'verified in SES in the target account and region; see docs/deploy.md).',
    );
  }
  if (mailFrom.toLowerCase().endsWith('@dispatch.example')) {
    throw new Error(`mailFrom ${mailFrom} is the placeholder sender: SES can never verify it (docs/deploy.md).`);
  }
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
  const named = (id: string): StackProps => ({ ...props, stackName: stackNameFor(id, stage) });
  const data = new DataStack(app, 'DispatchData', named('DispatchData'));
  const api = new ApiStack(app, 'DispatchApi', {
    ...named('DispatchApi'),
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
      alarmTopic: monitoring.alarmTopic,
    });
  });
  return { stage, data, api, realtime, areaStacks, workers, monitoring };
}
