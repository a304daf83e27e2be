// T6.test POST /v1/admin/partner-authorizations/{partnerAuthorizationID}/test-events
import { endpoint } from '#shared/http/endpoint';
import { accepted } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { sendTestEvent } from '#shared/webhooks/deliveries';

export const handler = endpoint(tokensRoutes, 'T6.test', async ({ params }) =>
  accepted(await sendTestEvent(params.partnerAuthorizationID)),
);
