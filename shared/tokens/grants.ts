/** X5 `POST /v1/auth/token`: client credentials, and the one-time redemption of a T8 auth code. */
import { issueBearerToken } from '#shared/auth/tokens';
import { invalidField } from '#shared/http/problems';
import { redeemAuthCode } from '#shared/tokens/auth-codes';
import { authenticateClient } from '#shared/tokens/clients';

export async function grantToken(
  authorization: string | undefined,
  body: { grant_type: string; code?: string | undefined },
) {
  const client = await authenticateClient(authorization);
  if (body.grant_type === 'authorization_code') {
    if (!body.code) throw invalidField('code', 'is required for the authorization_code grant');
    return redeemAuthCode(client, body.code);
  }
  return issueBearerToken(
    { kind: 'client', id: client.id, roles: client.roles, orgId: client.org_id },
    client.token_gen,
  );
}
