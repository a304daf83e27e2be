/**
 * Recipients' tracking links (contract 4.11: X27, X28, X29), in the imports area's stack beside X10 and X11, whose
 * tasks they follow (see shared/routes.ts for the whole table; the public page `/track/{token}` is served with /ops).
 */
import { THROTTLES } from '#shared/routes/throttles';
import type { RouteDef } from '#shared/routes/types';
import * as tracking from '#shared/tracking/schemas';

export const trackingRoutes = [
  {
    id: 'X27',
    method: 'POST',
    path: '/v1/tasks/{taskID}/tracking',
    area: 'imports',
    handler: 'imports/make-tracking-link',
    // The task, its runsheet's records (its expiry follows its task's end), the link's two items; the page-token
    // secret, from which the links' HMAC key is derived (shared/tracking/links.ts).
    needs: { main: 'write', pageTokens: true },
    access: ['OrgAdmin', 'OrgTransporter', 'Merchant', 'SysAdmin'],
    scopes: ['imports', 'plannings'],
    summary: "Make a tracking link for the task's recipient, or show the one it has",
    status: 201,
    repeatStatus: 200,
    request: { params: tracking.trackingTaskParams },
    response: tracking.trackingLinkReply,
  },
  {
    id: 'X28',
    method: 'DELETE',
    path: '/v1/tasks/{taskID}/tracking',
    area: 'imports',
    handler: 'imports/revoke-tracking-link',
    needs: { main: 'write' },
    access: ['OrgAdmin', 'OrgTransporter', 'Merchant', 'SysAdmin'],
    scopes: ['imports', 'plannings'],
    summary: "Revoke the task's tracking link: it stops working at once",
    status: 200,
    request: { params: tracking.trackingTaskParams },
    response: tracking.revokedReply,
  },
  {
    id: 'X29',
    method: 'GET',
    path: '/v1/tracking/{token}',
    area: 'imports',
    handler: 'imports/read-tracking',
    // Its rate counters (main-table writes), the link, the task, its organisation, its runsheet's records and the
    // driver's last fix (the ETA, and the position while the drop-off is next).
    needs: { main: 'write', locations: 'read' },
    access: 'public',
    throttle: THROTTLES.tracking,
    summary: "What a tracking link's recipient sees: status, window, ETA, the driver's first name",
    status: 200,
    request: { params: tracking.trackingTokenParams },
    response: tracking.trackingReply,
  },
] as const satisfies readonly RouteDef[];
