// T4 GET /v1/admin/partner-authorizations
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { listPartners } from '#shared/tokens/partners';

export const handler = endpoint(tokensRoutes, 'T4', async ({ query }) => ok(await listPartners(pageOf(query))));
