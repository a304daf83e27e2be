/**
 * Clients: partner authorizations (T3–T7) and internal worker clients (X7). Both authenticate with client
 * credentials (X5: HTTP Basic `client_key:secret_key`). Secrets are 256-bit random strings shown once and stored as
 * SHA-256; a partner's webhook signing secret is sealed by the secret box (only the delivery function may open it).
 *
 * Items: `CLIENT#<id> / PROFILE` (GSI1 `CLIENTS#<kind>` newest first; partners also GSI2 `ORG#<org>#PARTNERS`),
 * and the key claim `CLIENTKEY#<client_key> / KEY`.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_PARTNER_SCOPES, type Role, type Scope } from '#shared/auth/roles';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName, transactWrite } from '#shared/db/client';
import { type PageRequest, queryPage } from '#shared/db/paging';
import { conflict, notFound, unauthenticated } from '#shared/errors';
import { newSecret, recordKey, recordUuid } from '#shared/ids';
import { secretBox } from '#shared/ports/secret-box';

export type ClientKind = 'partner' | 'internal';

export interface ClientRecord {
  id: string;
  kind: ClientKind;
  name: string;
  client_key: string;
  secret_hash: string;
  roles: Role[];
  org_id: string | null;
  /** A partner's scopes; a partner stored before scopes existed holds DEFAULT_PARTNER_SCOPES. */
  scopes?: Scope[];
  webhook_url?: string;
  webhook_secret_sealed?: string;
  token_gen: number;
  revoked_at?: string | null;
  created_at: string;
  updated_at: string;
  updated_by: string;
}

export const clientKey = (id: string) => ({ PK: `CLIENT#${id}`, SK: 'PROFILE' });
const keyClaim = (key: string) => ({ PK: `CLIENTKEY#${key}`, SK: 'KEY' });
const hashSecret = (secret: string) => createHash('sha256').update(secret).digest();

function indexAttributes(client: ClientRecord) {
  const created = `${client.created_at}#${client.id}`;
  return {
    GSI1PK: `CLIENTS#${client.kind}`,
    GSI1SK: created,
    ...(client.kind === 'partner' && client.org_id ? { GSI2PK: `ORG#${client.org_id}#PARTNERS`, GSI2SK: created } : {}),
  };
}

const itemOf = (client: ClientRecord) => ({
  ...clientKey(client.id),
  ...indexAttributes(client),
  entity: 'client',
  ...client,
});

export interface NewClient {
  kind: ClientKind;
  name: string;
  roles: Role[];
  orgId: string | null;
  scopes?: Scope[];
  webhookUrl?: string;
  createdBy: string;
}

/**
 * Creates a client; the secret key (and a partner's webhook secret) are returned once and never again. Its id and
 * client key derive from the request's Idempotency-Key (shared/ids.ts): a retry after a lost answer finds the client
 * its first attempt wrote, whose secrets the client never saw, so it gives that client the retry's fresh secrets
 * (only their hash and seal are stored, the first ones cannot be answered again) instead of creating a second one.
 */
export async function createClient(input: NewClient) {
  const secretKey = `sk_${newSecret(32)}`;
  // Standard Webhooks secrets are `whsec_` + standard base64 of the key bytes.
  const webhookSecret = input.kind === 'partner' ? `whsec_${randomBytes(24).toString('base64')}` : undefined;
  const now = clock.nowIso();
  const client: ClientRecord = {
    id: recordUuid(),
    kind: input.kind,
    name: input.name,
    client_key: `ck_${recordKey(15)}`,
    secret_hash: hashSecret(secretKey).toString('hex'),
    roles: input.roles,
    org_id: input.orgId,
    ...(input.scopes ? { scopes: input.scopes } : {}),
    ...(input.webhookUrl ? { webhook_url: input.webhookUrl } : {}),
    ...(webhookSecret ? { webhook_secret_sealed: await secretBox().seal(webhookSecret) } : {}),
    token_gen: 1,
    created_at: now,
    updated_at: now,
    updated_by: input.createdBy,
  };
  const outcome = await transactWrite([
    { Put: { TableName: mainTableName(), Item: itemOf(client), ConditionExpression: 'attribute_not_exists(PK)' } },
    {
      Put: {
        TableName: mainTableName(),
        Item: { ...keyClaim(client.client_key), entity: 'client_key', client_id: client.id },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  ]);
  if (outcome === 'earlier') return { client: await giveSecrets(client), secretKey, webhookSecret };
  return { client, secretKey, webhookSecret };
}

/** How long a retry may still replace the secrets of the client its key made: the idempotency record's 24 hours. */
const RETRY_WINDOW_MS = 24 * 3600 * 1000;

/**
 * The retry of a create whose answer was lost: the client its first attempt wrote takes the retry's secrets. Only
 * within the key's 24 hours: later, the client's secrets may be in use, and the same key again is a 409.
 */
async function giveSecrets(client: ClientRecord): Promise<ClientRecord> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: clientKey(client.id),
        UpdateExpression: `SET secret_hash = :hash${client.webhook_secret_sealed ? ', webhook_secret_sealed = :sealed' : ''}`,
        ConditionExpression: 'attribute_exists(PK) AND created_at > :since',
        ExpressionAttributeValues: {
          ':hash': client.secret_hash,
          ':since': new Date(clock.nowMs() - RETRY_WINDOW_MS).toISOString(),
          ...(client.webhook_secret_sealed ? { ':sealed': client.webhook_secret_sealed } : {}),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes ? toRecord(out.Attributes) : client;
  } catch (error) {
    if (isConditionalFailure(error)) throw conflict('this Idempotency-Key already made a client; send another key');
    throw error;
  }
}

export async function findClient(id: string): Promise<ClientRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: clientKey(id) }));
  return out.Item ? toRecord(out.Item) : undefined;
}

export async function findClientByKey(key: string): Promise<ClientRecord | undefined> {
  const claim = await db().send(new GetCommand({ TableName: mainTableName(), Key: keyClaim(key) }));
  const id = claim.Item?.['client_id'];
  return typeof id === 'string' ? findClient(id) : undefined;
}

export async function getClient(id: string, kind: ClientKind): Promise<ClientRecord> {
  const client = await findClient(id);
  if (!client || client.kind !== kind) throw notFound(kind === 'partner' ? 'partner authorization' : 'client');
  return client;
}

export function listClients(kind: ClientKind, page: PageRequest) {
  return queryPage(
    {
      TableName: mainTableName(),
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :kind',
      ExpressionAttributeValues: { ':kind': `CLIENTS#${kind}` },
      ScanIndexForward: false,
    },
    page,
    toRecord,
  );
}

/** The partners acting for an organisation (webhook fan-out). */
export async function partnersOf(orgId: string): Promise<ClientRecord[]> {
  const page = await queryPage(
    {
      TableName: mainTableName(),
      IndexName: 'GSI2',
      KeyConditionExpression: 'GSI2PK = :org',
      ExpressionAttributeValues: { ':org': `ORG#${orgId}#PARTNERS` },
    },
    { page: 1, perPage: 100 },
    toRecord,
  );
  return page.items.filter((client) => !client.revoked_at);
}

/** Saves changed fields, on the condition that nobody changed the client since it was read. */
export async function updateClient(before: ClientRecord, changes: Partial<ClientRecord>): Promise<ClientRecord> {
  const after: ClientRecord = { ...before, ...changes, updated_at: clock.nowIso() };
  if (after.updated_at <= before.updated_at)
    after.updated_at = new Date(Date.parse(before.updated_at) + 1).toISOString();
  try {
    await transactWrite([
      {
        Put: {
          TableName: mainTableName(),
          Item: itemOf(after),
          ConditionExpression: 'updated_at = :before',
          ExpressionAttributeValues: { ':before': before.updated_at },
        },
      },
    ]);
  } catch (error) {
    if (isConditionalFailure(error)) throw conflict('the client was changed by another request; read it and retry');
    throw error;
  }
  return after;
}

/** Revoking ends the client: X5 refuses it and its bearer tokens stop at the authorizer's next generation read. */
export async function revokeClient(id: string, by: string): Promise<void> {
  const client = await findClient(id);
  if (!client) throw notFound('client');
  if (client.revoked_at) return;
  await updateClient(client, { revoked_at: clock.nowIso(), token_gen: client.token_gen + 1, updated_by: by });
}

/** The generation a client token must carry, or null for a revoked or unknown client (the authorizer's check). */
export async function clientTokenGeneration(id: string): Promise<number | null> {
  const out = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: clientKey(id), ProjectionExpression: 'token_gen, revoked_at' }),
  );
  if (!out.Item || out.Item['revoked_at']) return null;
  return Number(out.Item['token_gen'] ?? 1);
}

/** One part of Basic credentials, percent-decoded (RFC 6749 2.3.1); a malformed escape (`%`, `%zz`) is undefined. */
function decodedPart(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/** HTTP Basic `client_key:secret_key`; anything wrong is the same 401. */
export async function authenticateClient(authorization: string | undefined): Promise<ClientRecord> {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(authorization?.trim() ?? '');
  if (!match?.[1]) throw unauthenticated();
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) throw unauthenticated();
  const key = decodedPart(decoded.slice(0, colon));
  const secret = decodedPart(decoded.slice(colon + 1));
  if (key === undefined || secret === undefined) throw unauthenticated();
  const client = await findClientByKey(key);
  const presented = hashSecret(secret);
  const stored = Buffer.from(client?.secret_hash ?? '0'.repeat(64), 'hex');
  if (!client || client.revoked_at || !timingSafeEqual(presented, stored)) throw unauthenticated();
  return client;
}

function toRecord(item: Record<string, unknown>): ClientRecord {
  return Object.fromEntries(
    Object.entries(item).filter(([key]) => !/^(PK|SK|GSI\dPK|GSI\dSK|entity)$/.test(key)),
  ) as unknown as ClientRecord;
}

/** A partner's scopes as granted (T3/T5), or the default for a partner stored before scopes existed. */
export function partnerScopesOf(client: ClientRecord): Scope[] {
  return [...(client.scopes ?? DEFAULT_PARTNER_SCOPES)];
}

/** T4–T6 view: never the secret key; the webhook secret only at creation. */
export function toPartnerView(client: ClientRecord) {
  return {
    id: client.id,
    client_key: client.client_key,
    name: client.name,
    webhook_url: client.webhook_url ?? null,
    org_id: client.org_id,
    scopes: partnerScopesOf(client),
    created_at: client.created_at,
    updated_at: client.updated_at,
    updated_by: client.updated_by,
    ...(client.revoked_at ? { revoked_at: client.revoked_at } : {}),
  };
}

export function toClientView(client: ClientRecord) {
  return {
    id: client.id,
    name: client.name,
    roles: client.roles,
    client_key: client.client_key,
    created_at: client.created_at,
    ...(client.revoked_at ? { revoked_at: client.revoked_at } : {}),
  };
}
