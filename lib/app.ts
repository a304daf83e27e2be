/** Builds every stack of the service into `app`: the data stack, the API stack, and one stack per area. */
import type { App, StackProps } from 'aws-cdk-lib';
import { ApiStack } from '#lib/stacks/api-stack';
import { AreaStack } from '#lib/stacks/area-stack';
import { DataStack } from '#lib/stacks/data-stack';
import { RealtimeStack } from '#lib/stacks/realtime-stack';
import { WorkersStack } from '#lib/stacks/workers-stack';
import { type Area, type RouteDef, routes } from '#shared/routes';

export function buildApp(app: App, props: StackProps = {}) {
  const mailFrom: string = app.node.tryGetContext('mailFrom') ?? 'no-reply@dispatch.example';
  const data = new DataStack(app, 'DispatchData', props);
  const api = new ApiStack(app, 'DispatchApi', {
    ...props,
    data,
    adminEmail: app.node.tryGetContext('adminEmail') ?? 'admin@dispatch.local',
    mailFrom,
  });
  const realtime = new RealtimeStack(app, 'DispatchRealtime', { ...props, data, mailFrom, httpApi: api.httpApi });
  const areas = new Map<Area, RouteDef[]>();
  for (const route of routes as readonly RouteDef[]) areas.set(route.area, [...(areas.get(route.area) ?? []), route]);
  const areaStacks = [...areas].map(
    ([area, areaRoutes]) =>
      new AreaStack(app, `Dispatch${area[0]!.toUpperCase()}${area.slice(1)}`, {
        ...props,
        area,
        routes: areaRoutes,
        data,
        httpApi: api.httpApi,
        authorizerId: api.authorizerId,
        mailFrom,
        realtime,
      }),
  );
  const workers = new WorkersStack(app, 'DispatchWorkers', { ...props, data, realtime, mailFrom });
  return { data, api, realtime, areaStacks, workers };
}
