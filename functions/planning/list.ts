// P1 GET /v1/plannings
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { listPlannings } from '#shared/planning/plannings';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'P1', async ({ query, caller }) =>
  ok(
    await listPlannings(
      caller,
      { order: query.order, start: query.range_start_created_at, end: query.range_end_created_at },
      { page: query.page, perPage: query.per_page, pageToken: query.page_token },
    ),
  ),
);
