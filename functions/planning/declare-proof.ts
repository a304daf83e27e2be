// X21 POST /v1/driver/proofs
import { endpoint } from '#shared/http/endpoint';
import { created } from '#shared/http/responses';
import { declareProof } from '#shared/planning/proofs';
import { planningRoutes } from '#shared/routes/planning';

export const handler = endpoint(planningRoutes, 'X21', async ({ body, caller }) =>
  created(await declareProof(caller, body)),
);
