/**
 * One definition of every table and its indexes. The CDK data stack and the local host's CreateTable both read it,
 * so the emulator and the cloud can never disagree on a key or an index.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export interface IndexDef {
  name: string;
  partitionKey: string;
  sortKey?: string;
  /**
   * What the index holds besides the keys: the attributes its queries read (INCLUDE), `KEYS_ONLY`, or, when absent,
   * ALL. docs/indexes.md lists each index's queries and what they read.
   */
  include?: readonly string[] | 'KEYS_ONLY';
  /**
   * Its entries are an order of keys, not the records: a page read through it is fetched from the table
   * (`queryPage`, one BatchGetItem). For indexes whose readers show more than a projection may hold.
   */
  readThrough?: true;
}

/** The fields a user listing shows (toListedUser): search filters on `org_id` and sorts on `created_at`. */
const LISTED_USER = ['id', 'email', 'name', 'created_at', 'updated_at', 'org_id', 'roles'] as const;
/** A15 shows more of each user: whether confirmed, whether an invitation is pending. */
const ROLE_LISTED_USER = [...LISTED_USER, 'confirmed_at', 'invitation_token_hash'] as const;

/** An index's projection, as CreateTable (and, through the data stack, CloudFormation) takes it. */
export function projectionOf(index: IndexDef): {
  ProjectionType: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
  NonKeyAttributes?: string[];
} {
  if (index.include === undefined) return { ProjectionType: 'ALL' };
  if (index.include === 'KEYS_ONLY') return { ProjectionType: 'KEYS_ONLY' };
  return { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.include] };
}

export interface TableDef {
  /** Construct id and local table name suffix. */
  id: string;
  /** The environment variable through which functions learn the table's name. */
  envVar: string;
  partitionKey: string;
  sortKey?: string;
  indexes: IndexDef[];
  ttlAttribute?: string;
  /** A change stream of the items' new images (the live positions fan-out reads the locations table's). */
  stream?: 'NEW_IMAGE';
}

export const mainTable = {
  id: 'Main',
  envVar: 'MAIN_TABLE',
  partitionKey: 'PK',
  sortKey: 'SK',
  ttlAttribute: 'expires_at',
  indexes: [
    // Listings newest first within a scope: organisations (`ORGS`), an organisation's users, plannings,
    // notifications, imports (`ORG#<id>#…`), push keys of an application, API clients of a kind. Their readers
    // show about 35 attributes of seven item types, past what INCLUDE may name (20 an index): the entries hold the
    // keys (and `is_qa`, which N7 filters on) and a page is read from the table (docs/indexes.md).
    { name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK', include: ['is_qa'], readThrough: true },
    // The unfiltered (SysAdmin) listings of users, plannings, notifications, imports, push keys; an organisation's
    // partners. Read through, as GSI1.
    { name: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK', include: ['is_qa'], readThrough: true },
    // Users by lowercased email (`USERS#<n>`): prefix search (listed fields); the sweeps' work lists
    // (shared/db/shards.ts), a dispatch day's one an organisation, `<list>#<org>`: `OFFERS` (the expiry sweep, keys
    // only), `WAVEPLANS` (the wave worker's registry of plannings, each with its own list `WAVES#<plan>#<n>`:
    // shared/planning/wave-plans.ts), `ACTIVEJOBS` (the requeue sweep: `entity`, `id`, `job`); `OUTBOX` (mail held:
    // `mail`) over shards `OUTBOX#<n>`.
    { name: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK', include: [...LISTED_USER, 'entity', 'job', 'mail'] },
    // Users by lowercased name: prefix search.
    { name: 'GSI4', partitionKey: 'GSI4PK', sortKey: 'GSI4SK', include: LISTED_USER },
    // An organisation's users of one role (`ORG#<id>#ROLE#<role>`) by name, by email and by creation (A15).
    { name: 'GSI5', partitionKey: 'GSI5PK', sortKey: 'GSI5SK', include: ROLE_LISTED_USER },
    { name: 'GSI6', partitionKey: 'GSI6PK', sortKey: 'GSI6SK', include: ROLE_LISTED_USER },
    { name: 'GSI7', partitionKey: 'GSI7PK', sortKey: 'GSI7SK', include: ROLE_LISTED_USER },
  ],
} as const satisfies TableDef;

/**
 * Driver locations: one item per driver (`LOCS#<org> / <id>`, one partition key per organisation so that its live
 * positions ride one stream shard; a freelance driver `LOC#<id> / CURRENT`) plus the cell directory (`CELLS#TOP#<n>`, `CELLS#ALL#<p3>`).
 * Geo lists every driver by partition cell and shard (`<precision-5 cell>#<shard>`), sorted by the precision-9 geohash
 * then the driver id; it holds what L3 and L4 choose their candidates by (organisation, service types, the fix's time
 * to the granule), and only location items carry its keys.
 */
export const locationsTable = {
  id: 'Locations',
  envVar: 'LOCATIONS_TABLE',
  partitionKey: 'PK',
  sortKey: 'SK',
  // Live positions (`driver.location` on `org.<id>`) are fanned out from this stream, off L1's path.
  stream: 'NEW_IMAGE',
  indexes: [
    {
      name: 'Geo',
      partitionKey: 'GEO_PK',
      sortKey: 'GEO_SK',
      // What a fix leaves alone while its driver stays in its precision-6 cell, GEO_SK's prefix (issues 27 and 32): a
      // driver in its cell costs no index write but once a GEO_TIME_GRANULARITY_S. L3 and L4 read the candidates' items.
      include: ['user_id', 'org_id', 'service_types', 'geo_time'],
    },
  ],
} as const satisfies TableDef;

/**
 * WebSocket connections (`CONN#<id>`) and channel subscriptions (`CHAN#<channel> / <connection id>`), gone by TTL
 * two hours after connecting (API Gateway's longest connection) if no disconnect cleaned them up first.
 */
export const connectionsTable = {
  id: 'Connections',
  envVar: 'CONNECTIONS_TABLE',
  partitionKey: 'PK',
  sortKey: 'SK',
  ttlAttribute: 'expires_at',
  indexes: [],
} as const satisfies TableDef;

/** Powertools idempotency records (its default key `id` and TTL attribute `expiration`). */
export const idempotencyTable = {
  id: 'Idempotency',
  envVar: 'IDEMPOTENCY_TABLE',
  partitionKey: 'id',
  ttlAttribute: 'expiration',
  indexes: [],
} as const satisfies TableDef;

export const tables: readonly TableDef[] = [mainTable, idempotencyTable, locationsTable, connectionsTable];

/** The index, when a page read through `indexName` is fetched from the table (see `IndexDef.readThrough`). */
export const readThroughIndex = (indexName: string | undefined): IndexDef | undefined =>
  indexName === undefined
    ? undefined
    : tables.flatMap((table) => table.indexes).find((index) => index.name === indexName && index.readThrough === true);

/** Every key attribute of a table is a string. */
export function createTableInput(def: TableDef, tableName: string): CreateTableCommandInput {
  const attributes = new Set<string>([def.partitionKey]);
  if (def.sortKey) attributes.add(def.sortKey);
  for (const index of def.indexes) {
    attributes.add(index.partitionKey);
    if (index.sortKey) attributes.add(index.sortKey);
  }
  const keySchema = (pk: string, sk?: string) => [
    { AttributeName: pk, KeyType: 'HASH' as const },
    ...(sk ? [{ AttributeName: sk, KeyType: 'RANGE' as const }] : []),
  ];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: keySchema(def.partitionKey, def.sortKey),
    ...(def.stream ? { StreamSpecification: { StreamEnabled: true, StreamViewType: def.stream } } : {}),
    ...(def.indexes.length > 0
      ? {
          GlobalSecondaryIndexes: def.indexes.map((index) => ({
            IndexName: index.name,
            KeySchema: keySchema(index.partitionKey, index.sortKey),
            Projection: projectionOf(index),
          })),
        }
      : {}),
  };
}
