// X7.revoke DELETE /v1/admin/clients/{clientID}
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { tokensRoutes } from '#shared/routes/tokens';
import { revokeClient } from '#shared/tokens/clients';

export const handler = endpoint(tokensRoutes, 'X7.revoke', async ({ params, caller }) => {
  await revokeClient(params.clientID, caller.id);
  return success('the client is revoked');
});
