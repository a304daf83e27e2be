// T6.own-deliveries GET /v1/partner/webhook-deliveries: a partner's own delivery log (the caller is the partner).
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { listDeliveries } from '#shared/webhooks/deliveries';

export const handler = endpoint(tokensRoutes, 'T6.own-deliveries', async ({ query, caller }) =>
  ok(await listDeliveries(caller.id, pageOf(query))),
);
