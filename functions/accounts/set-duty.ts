// X15 PUT /v1/driver/duty
import { setDuty } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'X15', async ({ body, caller }) =>
  ok(await setDuty(caller, body.on_duty)),
);
