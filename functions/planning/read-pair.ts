// R1 GET /v1/broadcast-plans/{plan_id}/pairs/{pair_id}
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { readPairRecord } from '#shared/planning/pair-records';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'R1', async ({ params, caller }) =>
  ok({ pair_record: await readPairRecord(caller, params.plan_id, params.pair_id) }),
);
