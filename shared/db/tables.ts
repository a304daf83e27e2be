/**
 * One definition of every table and its indexes. The CDK data stack and the local host's CreateTable both read it,
 * so the emulator and the cloud can never disagree on a key or an index.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export interface IndexDef {
  name: string;
  partitionKey: string;
  sortKey?: string;
  /** The non-key attributes its queries read (INCLUDE); absent: every attribute (ALL). */
  projection?: readonly string[];
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
    // Listings newest first within a scope: organisations (`ORGS`), an organisation's users (`ORG#<id>#USERS`).
    { name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
    // Every user newest first (`USERS`), for the SysAdmin list without a filter.
    { name: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' },
    // Users by lowercased email and by lowercased name: prefix search.
    { name: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK' },
    { name: 'GSI4', partitionKey: 'GSI4PK', sortKey: 'GSI4SK' },
    // An organisation's users of one role (`ORG#<id>#ROLE#<role>`) by name, by email and by creation (A15).
    { name: 'GSI5', partitionKey: 'GSI5PK', sortKey: 'GSI5SK' },
    { name: 'GSI6', partitionKey: 'GSI6PK', sortKey: 'GSI6SK' },
    { name: 'GSI7', partitionKey: 'GSI7PK', sortKey: 'GSI7SK' },
  ],
} as const satisfies TableDef;

/**
 * Driver locations: one item per driver (`LOC#<id> / CURRENT`) plus the cell directory (`CELLS#ALL…`). Geo lists
 * every driver by partition cell and shard (`<precision-5 cell>#<shard>`), sorted by the precision-9 geohash then the
 * driver id; it holds what L3 and L4 answer and filter on, and only location items carry its keys.
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
      projection: [
        'id',
        'user_id',
        'device_id',
        'latitude',
        'longitude',
        'altitude',
        'client_time_utc',
        'client_timezone',
        'server_time',
        'version',
        'org_id',
        'service_types',
      ],
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
            Projection: index.projection
              ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projection] }
              : { ProjectionType: 'ALL' },
          })),
        }
      : {}),
  };
}
