/** Partner authorizations (T3–T7) and internal clients (X7): who may hold client credentials, and what they see. */
import { requireOrganisation } from '#shared/accounts/organisations';
import type { Caller } from '#shared/auth/caller';
import { DEFAULT_PARTNER_SCOPES, type INTERNAL_ROLES, PARTNER_SCOPES, type Scope } from '#shared/auth/roles';
import type { PageRequest } from '#shared/db/paging';
import { notFound } from '#shared/http/problems';
import {
  createClient,
  findClientByKey,
  getClient,
  listClients,
  partnerScopesOf,
  toClientView,
  toPartnerView,
  updateClient,
} from '#shared/tokens/clients';
import { checkWebhookUrl } from '#shared/tokens/webhook-url';

/** T3: the only answer that shows `secret_key` and `webhook_secret`. */
export async function createPartner(
  caller: Caller,
  input: { name: string; webhook_url: string; org_id?: string | undefined; scopes?: Scope[] | undefined },
) {
  await checkWebhookUrl(input.webhook_url, 'webhook_url');
  if (input.org_id) await requireOrganisation(input.org_id, 'org_id');
  const { client, secretKey, webhookSecret } = await createClient({
    kind: 'partner',
    name: input.name,
    roles: ['Partner'],
    orgId: input.org_id ?? null,
    scopes: distinct(input.scopes ?? DEFAULT_PARTNER_SCOPES),
    webhookUrl: input.webhook_url,
    createdBy: caller.id,
  });
  return { ...toPartnerView(client), secret_key: secretKey, webhook_secret: webhookSecret! };
}

/** Each scope once, in the order of the contract's list. */
const distinct = (scopes: readonly Scope[]): Scope[] => PARTNER_SCOPES.filter((scope) => scopes.includes(scope));

/**
 * T5. A change of scopes ends the partner's tokens issued before it, as a revocation does (contract section 3, issue
 * 42 item 7): the client's token generation moves on in the same write, so a token still carrying a scope taken away
 * is a 401 at the next call (within the authorizer's cache time), not an hour of access the SysAdmin meant to end.
 * The partner's next X5 token carries the new scopes. A T5 that leaves the scopes as they were ends nothing.
 */
export async function updatePartner(
  caller: Caller,
  id: string,
  input: { name: string; webhook_url: string; scopes?: Scope[] | undefined },
) {
  const partner = await getClient(id, 'partner');
  await checkWebhookUrl(input.webhook_url, 'webhook_url');
  const scopes = input.scopes ? distinct(input.scopes) : undefined;
  const changed = scopes !== undefined && scopes.join(' ') !== partnerScopesOf(partner).join(' ');
  return toPartnerView(
    await updateClient(partner, {
      name: input.name,
      webhook_url: input.webhook_url,
      ...(scopes ? { scopes } : {}),
      ...(changed ? { token_gen: partner.token_gen + 1 } : {}),
      updated_by: caller.id,
    }),
  );
}

/** T6. */
export async function readPartner(id: string) {
  return toPartnerView(await getClient(id, 'partner'));
}

/** T4. */
export async function listPartners(page: PageRequest) {
  const found = await listClients('partner', page);
  return { partner_authorizations: found.items.map(toPartnerView), meta: found.meta };
}

/** T7: the basic view, for any authenticated caller. */
export async function partnerBasics(clientKey: string) {
  const partner = await findClientByKey(clientKey);
  if (partner?.kind !== 'partner' || partner.revoked_at) throw notFound('partner');
  return { client_key: partner.client_key, name: partner.name, webhook_url: partner.webhook_url ?? null };
}

/** X7. */
export async function createInternalClient(
  caller: Caller,
  input: { name: string; roles: (typeof INTERNAL_ROLES)[number][] },
) {
  const { client, secretKey } = await createClient({
    kind: 'internal',
    name: input.name,
    roles: [...new Set(input.roles)],
    orgId: null,
    createdBy: caller.id,
  });
  return { ...toClientView(client), secret_key: secretKey };
}

export async function listInternalClients() {
  const clients = [];
  let pageToken: string | undefined;
  do {
    const page = await listClients('internal', { page: 1, perPage: 1000, pageToken });
    clients.push(...page.items.map(toClientView));
    pageToken = page.meta.next_page_token ?? undefined;
  } while (pageToken);
  return { clients };
}
