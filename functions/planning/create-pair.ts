// R3 POST /v1/broadcast-plans/pairs
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { createPair } from '#shared/planning/broadcasts';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'R3', async ({ body }) => {
  await createPair(body);
  return created({ message: 'the pair is recorded' });
});
