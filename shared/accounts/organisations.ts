/**
 * Organisations (X2, X3). Item `ORG#<id> / PROFILE`, listed newest first through GSI1 (`ORGS`, created_at#id). The
 * sweeps read the same listing to find each organisation's work lists (shared/db/shards.ts `sweptOrganisations`).
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ORGANISATION_KINDS } from '#shared/accounts/schemas';
import { clock } from '#shared/clock';
import { db, mainTableName } from '#shared/db/client';
import { type PageRequest, queryPage } from '#shared/db/paging';
import { ORGS } from '#shared/db/shards';
import { invalidAt, notFound } from '#shared/errors';
import { recordUuid } from '#shared/ids';

export type OrganisationKind = (typeof ORGANISATION_KINDS)[number];

export interface Organisation {
  id: string;
  name: string;
  kind: OrganisationKind;
  created_at: string;
}

const orgKey = (id: string) => ({ PK: `ORG#${id}`, SK: 'PROFILE' });

/** The record and its Put, for writing an organisation together with something else (X1). */
export function buildOrganisationItem(input: { name: string; kind: OrganisationKind }) {
  const record: Organisation = { id: recordUuid(), name: input.name, kind: input.kind, created_at: clock.nowIso() };
  const put = {
    TableName: mainTableName(),
    Item: {
      ...orgKey(record.id),
      GSI1PK: ORGS,
      GSI1SK: `${record.created_at}#${record.id}`,
      entity: 'organisation',
      ...record,
    },
    ConditionExpression: 'attribute_not_exists(PK)',
  };
  return { record, put };
}

export async function createOrganisation(input: { name: string; kind: OrganisationKind }): Promise<Organisation> {
  const { record, put } = buildOrganisationItem(input);
  await db().send(new PutCommand(put));
  return record;
}

/** For bodies that name an organisation: an unknown id is a 400 at `field`, per contract section 2. */
export async function requireOrganisation(id: string, field: string): Promise<Organisation> {
  const org = await findOrganisation(id);
  if (!org) throw invalidAt(field, 'names no organisation');
  return org;
}

export async function findOrganisation(id: string): Promise<Organisation | undefined> {
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: orgKey(id) }));
  return out.Item ? toOrganisation(out.Item) : undefined;
}

export async function getOrganisation(id: string): Promise<Organisation> {
  const org = await findOrganisation(id);
  if (!org) throw notFound('organisation');
  return org;
}

export async function listOrganisations(page: PageRequest) {
  return queryPage(
    {
      TableName: mainTableName(),
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :orgs',
      ExpressionAttributeValues: { ':orgs': ORGS },
      ScanIndexForward: false,
    },
    page,
    toOrganisation,
  );
}

function toOrganisation(item: Record<string, unknown>): Organisation {
  return {
    id: String(item['id']),
    name: String(item['name']),
    kind: item['kind'] as OrganisationKind,
    created_at: String(item['created_at']),
  };
}
