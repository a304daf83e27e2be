/** X5 `POST /v1/auth/token`: client credentials, and the one-time redemption of a T8 auth code. */
import { issueBearerToken } from '#shared/auth/tokens';
import { invalidField } from '#shared/http/problems';
import { redeemAuthCode } from '#shared/tokens/auth-codes';
import { authenticateClient, partnerScopesOf } from '#shared/tokens/clients';
import { admitClient, admitSource } from '#shared/tokens/token-rate';

/** `sourceIp`: the caller's address as API Gateway saw it; each address and each client has a budget of its own. */
export async function grantToken(
  authorization: string | undefined,
  body: { grant_type: string; code?: string | undefined },
  sourceIp: string,
) {
  await admitSource(sourceIp);
  const client = await authenticateClient(authorization);
  await admitClient(client.id);
  if (body.grant_type === 'authorization_code') {
    if (!body.code) throw invalidField('code', 'is required for the authorization_code grant');
    return redeemAuthCode(client, body.code);
  }
  // A partner's token carries its scopes as they are now (contract section 3: a change applies at the next token).
  return issueBearerToken(
    {
      kind: 'client',
      id: client.id,
      roles: client.roles,
      orgId: client.org_id,
      ...(client.kind === 'partner' ? { scopes: partnerScopesOf(client) } : {}),
    },
    client.token_gen,
  );
}
