/**
 * THE route table: one entry per operation. CDK, the local host, the OpenAPI generator and the tests read it;
 * nothing else lists routes. Each area keeps its entries in shared/routes/<area>.ts, and a function imports only
 * its own area's table (so it carries only that area's schemas); this module joins them. Adding an endpoint is one
 * entry in its area's table, one thin file under functions/, and its domain function.
 */
import { accountsRoutes } from '#shared/routes/accounts';
import { authRoutes } from '#shared/routes/auth';
import { importsRoutes } from '#shared/routes/imports';
import { locationsRoutes } from '#shared/routes/locations';
import { notificationsRoutes } from '#shared/routes/notifications';
import { planningRoutes } from '#shared/routes/planning';
import { routingRoutes } from '#shared/routes/routing';
import { THROTTLES } from '#shared/routes/throttles';
import { tokensRoutes } from '#shared/routes/tokens';
import type { Needs, RouteDef, Throttle } from '#shared/routes/types';

export type { Access, Area, Method, Needs, RouteDef, Throttle } from '#shared/routes/types';

export const routes = [
  ...authRoutes,
  ...accountsRoutes,
  ...tokensRoutes,
  ...locationsRoutes,
  ...notificationsRoutes,
  ...importsRoutes,
  ...planningRoutes,
  ...routingRoutes,
] as const satisfies readonly RouteDef[];

export type RouteId = (typeof routes)[number]['id'];

const byId = new Map<string, RouteDef>(routes.map((route) => [route.id, route]));

export function routeById(id: RouteId): RouteDef {
  const route = byId.get(id);
  if (!route) throw new Error(`no route ${id} in the route table`);
  return route;
}

/** The WebSocket API's routes (route selection on `$request.body.action`), for CDK and the local host alike. */
export const websocketRoutes = [
  // Checks the bearer token (signature, token generation) and records the connection.
  {
    routeKey: '$connect',
    handler: 'realtime/connect',
    needs: { main: 'read', connections: 'write', signingKey: 'verify' },
    throttle: THROTTLES.connect,
  },
  { routeKey: '$disconnect', handler: 'realtime/disconnect', needs: { connections: 'write' } },
  // Checks each channel against the caller (a planning's organisation), records subscriptions, answers on the socket.
  {
    routeKey: 'subscribe',
    handler: 'realtime/subscribe',
    needs: { main: 'read', realtime: true },
    throttle: THROTTLES.subscribe,
  },
  {
    routeKey: '$default',
    handler: 'realtime/default',
    // Its connections:write (forgetting a connection whose post answers 410) is exercised by notifications.test.ts.
    needs: { realtime: true },
  },
] as const satisfies readonly { routeKey: string; handler: string; needs: Needs; throttle?: Throttle }[];
