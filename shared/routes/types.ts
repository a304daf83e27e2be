/** The shape of a route-table entry (shared by the per-area tables and everything that reads them). */

import type { GenericSchema } from 'valibot';
import type { Access, Scope } from '#shared/auth/roles';
import type { locationsTable, mainTable } from '#shared/db/tables';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** The CDK stack an operation's function lives in: stacks are split by area to stay under resource limits. */
export type Area = 'auth' | 'accounts' | 'tokens' | 'notifications' | 'locations' | 'imports' | 'planning' | 'routing';

export type { Access } from '#shared/auth/roles';

export type MainIndex = (typeof mainTable.indexes)[number]['name'];
export type LocationsIndex = (typeof locationsTable.indexes)[number]['name'];

/**
 * What a function's code touches, declared once next to its route (or its background function): CDK reads it for
 * the function's role and environment (lib/constructs/grants.ts), docs/grants.md lists it, and the IAM proof
 * (test/infra/iam-proof.test.ts) checks every AWS call the tests record against it, both ways. Read access is
 * GetItem, BatchGetItem, Query and ConditionCheckItem; write adds PutItem, UpdateItem, DeleteItem and BatchWriteItem.
 *
 * Derived, never declared: every non-public route reads the main table (the caller's user item and its token
 * generation); every POST route reads and writes the idempotency table; `realtime` writes the connections table.
 */
export interface Needs {
  /** The main table's items (its indexes are named apart, in `indexes`). */
  main?: 'read' | 'write';
  /** Main-table indexes the function queries. */
  indexes?: readonly MainIndex[];
  locations?: 'read' | 'write';
  locationIndexes?: readonly LocationsIndex[];
  /** The WebSocket connections table, for the WebSocket routes themselves. */
  connections?: 'read' | 'write';
  /** Delivers frames to WebSocket subscribers: reads the channel's connections, posts, removes gone ones. */
  realtime?: true;
  /**
   * The upload bucket: read any object (`read`), write under `uploads/`, write under `results/`, write under `proofs/`
   * (`proofs`: a presigned PUT of a proof of delivery), read under `proofs/` (`readProofs`).
   */
  objects?: readonly ('read' | 'uploads' | 'results' | 'proofs' | 'readProofs')[];
  /** Sends to the work queue. */
  queue?: true;
  /**
   * Sends to the route-build queue (contract 4.10: builds run in a worker function of their own); `sendAndCount`
   * also reads how many messages wait in it (the requeue sweep, shared/workers/requeue.ts).
   */
  routeQueue?: true | 'sendAndCount';
  /** The secret-box KMS key: seal (encrypt) webhook secrets, or open (decrypt) them. */
  secretBox?: 'seal' | 'open';
  /**
   * The signing-key secret: `verify` reads it; `sign` (functions that issue tokens) may also fill it in on the very
   * first cold start of a fresh deployment; `rotate` (the rotation function) reads it, stores a pending version and
   * makes it current (docs/key-rotation.md).
   */
  signingKey?: 'sign' | 'verify' | 'rotate';
  /**
   * Reads the page-token secret: a list whose pages are reached by `page_token` seals and opens its tokens with a key
   * of its own (shared/http/page-token-key.ts), not the signing key; X27 derives its tracking links' tokens with
   * another key from the same secret.
   */
  pageTokens?: true;
  /** Reads the seeded SysAdmin's password secret. */
  adminPassword?: true;
  /** Sends mail through SES from the configured sender. */
  mail?: true;
  /** Device push through SNS platform applications (granted only when the CDK context names some). */
  push?: true;
  /**
   * Road travel times from Amazon Location Service's route matrices (shared/routing/location-travel.ts), granted and
   * configured (`TRAVEL_MODEL`) only when the CDK context turns the road model on (`-c travel=amazon-location`).
   */
  roadTravel?: true;
  /** Verifies external identity tokens (T2): the EXTERNAL_* configuration. */
  externalIdentity?: true;
  /**
   * Grants the recorded test runs never use, each with the reason it stays (a path the tests cannot reach). Keys
   * are grant names as docs/grants.md lists them (`main:write`, `secretBox:seal`, `signingKey:fill`, …).
   */
  unexercised?: Readonly<Record<string, string>>;
}

/**
 * A route's own throttle on its API stage (issue 33 item 10), below the stage-wide one: API Gateway's token bucket,
 * `rate` requests a second refilled into a bucket of `burst`; a request over it gets API Gateway's 429. `concurrency`
 * is the function's reserved concurrency, applied only with `-c reserveConcurrency=true`. The figures and why each:
 * shared/routes/throttles.ts and docs/throttling.md.
 */
export interface Throttle {
  rate: number;
  burst: number;
  concurrency: number;
}

export interface RouteDef {
  /** Unique: the spec's operation number (A1 … R8), an X/system id, or `<number>.<variant>` for a second path. */
  id: string;
  /** The spec's number when `id` names a variant (I1.ops is the spec's I1 for operations staff). */
  specId?: string;
  method: Method;
  /** Path template with `{name}` parameters, as API Gateway writes it. */
  path: string;
  area: Area;
  /** Handler module, relative to functions/ and without extension. */
  handler: string;
  /** What the function's code touches (see Needs): its grants and environment derive from this alone. */
  needs: Needs;
  access: Access;
  /**
   * The partner scopes that open the operation to a partner client (contract section 3), which then answers as for
   * an OrgAdmin of the partner's organisation; `access` need not name `Partner` for them.
   */
  scopes?: readonly Scope[];
  summary: string;
  /** Success status of contract section 1/4. */
  status: number;
  /** A second success status with the same body: X20's repeat of an event already recorded (200, its first 201). */
  repeatStatus?: number;
  /**
   * The body's bound in bytes when it is below contract section 1's 1 MiB (issue 51.1): the function refuses a larger
   * body with 413 `payload_too_large` naming it before parsing it, in the cloud and in the local host alike, and the
   * local host stops reading it there.
   */
  maxBodyBytes?: number;
  request?: {
    params?: GenericSchema;
    query?: GenericSchema;
    /** Lower-cased header names; failures name `header.<name>`. */
    headers?: GenericSchema;
    body?: GenericSchema;
    /** Also accept `application/x-www-form-urlencoded` bodies (the OAuth-style token endpoint). */
    acceptsForm?: boolean;
  };
  /** The success body (JSON). */
  response?: GenericSchema;
  /**
   * For the one operation that answers in its own way (I8): what the document says of it, since the handler reads
   * its query itself to keep the spec's `{"Error": …}` failures. `bytes`: success is the file itself.
   */
  documented?: { query?: GenericSchema; bytes?: boolean; failure?: GenericSchema; redirect?: boolean };
  /** A public operation that checks a credential of its own (a password, a refresh token): when it answers 401. */
  unauthenticated?: string;
  /** Expensive or public: a throttle of its own on the HTTP API stage (see Throttle). */
  throttle?: Throttle;
}
