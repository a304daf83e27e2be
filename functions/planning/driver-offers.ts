// X12 GET /v1/driver/offers
import { endpoint } from '#shared/http/endpoint';
import { pageOf } from '#shared/http/list-queries';
import { ok } from '#shared/http/responses';
import { listDriverOffers } from '#shared/planning/pair-records';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'X12', async ({ query, caller }) =>
  ok(await listDriverOffers(caller, query.state, pageOf(query))),
);
