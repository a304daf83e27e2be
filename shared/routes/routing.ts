/** Route planning's operations (contract 4.10; one entry each; see shared/routes.ts for the whole table). */

import * as planning from '#shared/planning/schemas';
import { THROTTLES } from '#shared/routes/throttles';
import type { RouteDef } from '#shared/routes/types';
import { BUILD_ROLES, BUILD_SCOPES } from '#shared/routing/build-access';
import * as routing from '#shared/routing/schemas';

export const routingRoutes = [
  {
    id: 'X23',
    method: 'POST',
    path: '/v1/plannings/{planningID}/routes',
    area: 'routing',
    handler: 'routing/create-build',
    // Reads the named tasks and their import jobs (or an import job's entries in GSI1 and GSI2), the planning's
    // drivers; writes the build and queues it on the route queue (its own worker function: functions/workers/routes.ts).
    needs: { main: 'write', indexes: ['GSI1', 'GSI2'], routeQueue: true },
    // A build checks its caller against the same rule again as it runs (shared/routing/caller-access.ts).
    access: BUILD_ROLES,
    scopes: BUILD_SCOPES,
    throttle: THROTTLES.routeBuilds,
    summary: 'Build runsheets from tasks and vehicles: each task to a vehicle, each vehicle’s stops in order',
    status: 202,
    maxBodyBytes: routing.MAX_BUILD_BODY_BYTES,
    request: { params: planning.planningParams, body: routing.createBuildBody },
    response: routing.routeBuildView,
  },
  {
    id: 'X30',
    method: 'POST',
    path: '/v1/plannings/{planningID}/routes/insertions',
    area: 'routing',
    handler: 'routing/create-insertion',
    // As X23, and the named runsheets' items and dispatch records; the worker reads the live state (routing/live.ts).
    needs: { main: 'write', indexes: ['GSI1', 'GSI2'], routeQueue: true },
    access: BUILD_ROLES,
    scopes: BUILD_SCOPES,
    throttle: THROTTLES.routeBuilds,
    summary: 'Add tasks to the live runsheets: each into the route it fits best from where its driver is, or a new one',
    status: 202,
    maxBodyBytes: routing.MAX_BUILD_BODY_BYTES,
    request: { params: planning.planningParams, body: routing.createInsertionBody },
    response: routing.routeBuildView,
  },
  {
    id: 'X24',
    method: 'GET',
    path: '/v1/plannings/{planningID}/routes/{buildID}',
    area: 'routing',
    handler: 'routing/read-build',
    needs: {},
    access: ['OrgAdmin', 'OrgTransporter', 'Merchant', 'SysAdmin'],
    scopes: ['plannings'],
    summary: 'A route build: its status, progress while solving, result once completed, error once failed',
    status: 200,
    request: { params: routing.buildParams },
    response: routing.routeBuildView,
  },
  {
    id: 'X25',
    method: 'GET',
    path: '/v1/plannings/{planningID}/routes',
    area: 'routing',
    handler: 'routing/list-builds',
    // Its planning's list entries (a partition of the table: no index).
    needs: { pageTokens: true },
    access: ['OrgAdmin', 'OrgTransporter', 'Merchant', 'SysAdmin'],
    scopes: ['plannings'],
    summary: 'The planning’s route builds, newest first, without their results',
    status: 200,
    request: { params: planning.planningParams, query: routing.buildsQuery },
    response: routing.routeBuildList,
  },
  {
    id: 'X31',
    method: 'POST',
    path: '/v1/plannings/{planningID}/routes/{buildID}/apply',
    area: 'routing',
    handler: 'routing/apply-build',
    // Reads the build, its result and its tasks; adds the runsheets as the build's own apply does (tasks marked, the
    // planning's version moved with the build marked applied, in one transaction), assigns a driver's runsheet as X16
    // does (its pair events on the planning's channel and to partners: GSI2 and the queue, as X16's needs say).
    needs: { main: 'write', indexes: ['GSI2'], queue: true, realtime: true },
    access: BUILD_ROLES,
    scopes: BUILD_SCOPES,
    throttle: THROTTLES.routeBuilds,
    summary: 'Apply a completed dry run: its runsheets, stops and planned times added to the planning as answered',
    status: 200,
    request: { params: routing.buildParams, body: routing.applyBuildBody },
    response: routing.routeBuildView,
  },
] as const satisfies readonly RouteDef[];
