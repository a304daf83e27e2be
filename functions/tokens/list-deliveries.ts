// T6.deliveries GET /v1/admin/partner-authorizations/{partnerAuthorizationID}/deliveries
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { listDeliveries } from '#shared/webhooks/deliveries';

export const handler = endpoint(tokensRoutes, 'T6.deliveries', async ({ params, query }) =>
  ok(await listDeliveries(params.partnerAuthorizationID, pageOf(query))),
);
