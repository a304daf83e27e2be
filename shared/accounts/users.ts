/**
 * Users: the repository. Keys and index attributes are built here and nowhere else.
 *
 * Items: the user `USER#<id> / PROFILE`; the email claim `EMAIL#<lowercased email> / EMAIL`; counters
 * `COUNT#<scope> / COUNT` (all users, an organisation's users, an organisation's users of one role), so that list
 * totals never read every user. Every change goes through `saveUser(before, after)`: one transaction that writes the
 * user on the condition that nobody changed it since it was read, moves the email claim, and adjusts the counters.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DRIVERS, type Role } from '#shared/auth/roles';
import { clock } from '#shared/clock';
import { mapLimited } from '#shared/concurrency';
import {
  cancelledIndexes,
  db,
  getAll,
  isConditionalFailure,
  mainTableName,
  transactWrite,
  WRITE_TOKEN,
} from '#shared/db/client';
import { shardOf } from '#shared/db/shards';
import { conflict } from '#shared/errors';
import { newSecret, newUuid, recordUuidFor } from '#shared/ids';

export interface DriverProfile {
  version_rev: string;
  service_types: string[];
  /**
   * The duty state (X15). Absent until the driver first sets it: a driver is on duty from the account's creation.
   * Not part of `version_rev`: a toggle from the app must not make a profile edit (A21) stale.
   */
  on_duty?: boolean;
  /** When the current duty state began (absent: the account's `created_at`). */
  on_duty_since?: string;
}

/** A driver's duty state as shown: on duty since the account's creation until the driver says otherwise. */
export const dutyOf = (user: Pick<UserRecord, 'created_at' | 'driver_profile'>) => ({
  on_duty: user.driver_profile?.on_duty ?? true,
  since: user.driver_profile?.on_duty_since ?? user.created_at,
});

/** The driver profile as A1, A16, A21, A23 and X9 show it: its stored members and the duty state (X15). */
export function toDriverProfileView(user: Pick<UserRecord, 'created_at'> & { driver_profile: DriverProfile }) {
  const { on_duty, since } = dutyOf(user);
  return {
    version_rev: user.driver_profile.version_rev,
    service_types: user.driver_profile.service_types,
    on_duty,
    on_duty_since: since,
  };
}

export interface UserRecord {
  id: string;
  email: string;
  name: string;
  phone_number: number | null;
  roles: Role[];
  org_id: string | null;
  password_hash?: string;
  confirmed_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at?: string | null;
  /** Bumped to invalidate every bearer and refresh token issued before. */
  token_gen: number;
  driver_profile?: DriverProfile;
  /** Present while an invitation is pending: the hash of its token (the token itself is only ever in the mail). */
  invitation_token_hash?: string | null;
  /** The hash of the newest password-reset token, while one is outstanding. */
  reset_token_hash?: string | null;
  /** Set for accounts created by self-registration (A2 drivers, X1 merchants). */
  self_registered?: boolean;
}

type Item = Record<string, unknown>;

import type { TransactItem } from '#shared/db/client';

export type { TransactItem };

export const userKey = (id: string) => ({ PK: `USER#${id}`, SK: 'PROFILE' });
const emailKey = (email: string) => ({ PK: `EMAIL#${email.toLowerCase()}`, SK: 'EMAIL' });
export const ALL_USERS = 'USERS';
/**
 * Every user is counted, listed (GSI2) and searched by email and name (GSI3, GSI4) under one of `USER_SHARDS` keys
 * chosen by its id (`COUNT#USERS#<n>`, `USERS#<n>`): no key is written by every user created (issue 45,
 * docs/indexes.md "Shards"). A count, a listing page or a search reads all of them.
 */
const USER_SHARDS = 4;
const usersShard = (userId: string) => `${ALL_USERS}#${shardOf(userId, USER_SHARDS)}`;
export const userShards = Array.from({ length: USER_SHARDS }, (_, n) => `${ALL_USERS}#${n}`);
/** A listing's counter; all users' is sharded by the user's id. */
const counterKey = (scope: string, userId?: string) => ({
  PK: `COUNT#${scope === ALL_USERS && userId !== undefined ? usersShard(userId) : scope}`,
  SK: 'COUNT',
});
export const orgUsersScope = (orgId: string) => `ORG#${orgId}#USERS`;
export const orgRoleScope = (orgId: string, role: string) => `ORG#${orgId}#ROLE#${role}`;

/** The scopes a user is counted and listed in; a deleted user is in none. */
function scopesOf(user: UserRecord | undefined): string[] {
  if (!user || user.deleted_at) return [];
  const scopes = [ALL_USERS];
  if (user.org_id) {
    scopes.push(orgUsersScope(user.org_id));
    for (const role of user.roles) scopes.push(orgRoleScope(user.org_id, role));
  }
  return scopes;
}

const lower = (s: string) => s.toLowerCase();

/** Index attributes of a user item (see shared/db/tables.ts for what each index serves). */
function indexAttributes(user: UserRecord): Item {
  if (user.deleted_at) return {};
  const id = user.id;
  const created = `${user.created_at}#${id}`;
  const attributes: Item = {
    GSI2PK: usersShard(id),
    GSI2SK: created,
    GSI3PK: usersShard(id),
    GSI3SK: `${lower(user.email)}#${id}`,
    GSI4PK: usersShard(id),
    GSI4SK: `${lower(user.name)}#${id}`,
  };
  const role = user.roles[0];
  if (user.org_id) {
    attributes['GSI1PK'] = orgUsersScope(user.org_id);
    attributes['GSI1SK'] = created;
    if (role) {
      const scope = orgRoleScope(user.org_id, role);
      Object.assign(attributes, {
        GSI5PK: scope,
        GSI5SK: `${lower(user.name)}#${id}`,
        GSI6PK: scope,
        GSI6SK: `${lower(user.email)}#${id}`,
        GSI7PK: scope,
        GSI7SK: created,
      });
    }
  }
  return attributes;
}

export const newDriverProfile = (): DriverProfile => ({ version_rev: `1-${newSecret(6)}`, service_types: [] });

export interface NewUser {
  email: string;
  name: string;
  phone_number?: number | null;
  roles: Role[];
  org_id?: string | null;
  password_hash?: string;
  confirmed_at?: string | null;
  invitation_token_hash?: string | null;
  self_registered?: boolean;
}

export function buildUser(input: NewUser): UserRecord {
  const now = clock.nowIso();
  return {
    // Derived from the request's Idempotency-Key and the address: a registration or invitation retried after its
    // answer was lost meets the user its first attempt wrote (shared/db/client.ts, earlierTransaction).
    id: recordUuidFor(`user#${lower(input.email)}`),
    email: input.email,
    name: input.name,
    phone_number: input.phone_number ?? null,
    roles: input.roles,
    org_id: input.org_id ?? null,
    ...(input.password_hash ? { password_hash: input.password_hash } : {}),
    confirmed_at: input.confirmed_at ?? null,
    created_at: now,
    updated_at: now,
    token_gen: 1,
    ...(input.roles.some((role) => (DRIVERS as readonly Role[]).includes(role))
      ? { driver_profile: newDriverProfile() }
      : {}),
    ...(input.invitation_token_hash ? { invitation_token_hash: input.invitation_token_hash } : {}),
    ...(input.self_registered ? { self_registered: true } : {}),
  };
}

/** Creates a user and claims its email atomically; a taken address is a 409. */
export async function createUser(input: NewUser, extra: TransactItem[] = []): Promise<UserRecord> {
  const user = buildUser(input);
  await saveUser(undefined, user, extra);
  return user;
}

/**
 * The condition that the stored user is still `user` as read: its `updated_at`, and for a driver the duty state's
 * stamp, which a duty toggle (saveDriverDuty) moves without moving `updated_at`.
 */
function asRead(user: UserRecord) {
  const since = user.driver_profile?.on_duty_since;
  const duty = !user.driver_profile
    ? ''
    : since
      ? ' AND driver_profile.on_duty_since = :dutySince'
      : ' AND attribute_not_exists(driver_profile.on_duty_since)';
  return {
    ConditionExpression: `updated_at = :before${duty}`,
    ExpressionAttributeValues: { ':before': user.updated_at, ...(since ? { ':dutySince': since } : {}) },
  };
}

/**
 * The one write path. `before` is the record as read (undefined for a new user); the write succeeds only if the
 * stored record is still `before`. Extra transaction items (an invitation token, an organisation) ride along.
 */
export async function saveUser(before: UserRecord | undefined, after: UserRecord, extra: TransactItem[] = []) {
  const table = mainTableName();
  const items: TransactItem[] = [
    {
      Put: {
        TableName: table,
        Item: {
          ...userKey(after.id),
          ...indexAttributes(after),
          entity: 'user',
          email_lc: lower(after.email),
          ...after,
        },
        ...(before ? asRead(before) : { ConditionExpression: 'attribute_not_exists(PK)' }),
      },
    },
  ];
  let claimIndex = -1;
  const claimedBefore = before && !before.deleted_at ? lower(before.email) : undefined;
  const claimedAfter = after.deleted_at ? undefined : lower(after.email);
  if (claimedBefore !== claimedAfter) {
    if (claimedAfter) {
      claimIndex = items.length;
      items.push({
        Put: {
          TableName: table,
          Item: { ...emailKey(claimedAfter), entity: 'email', user_id: after.id },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      });
    }
    if (claimedBefore) items.push({ Delete: { TableName: table, Key: emailKey(claimedBefore) } });
  }
  // Counters keep each listing's size and version; the version moves whenever membership or order changes, which
  // retires the listing's page anchors (shared/db/paging.ts).
  const beforeScopes = scopesOf(before);
  const afterScopes = scopesOf(after);
  const reordered = before !== undefined && (before.name !== after.name || lower(before.email) !== lower(after.email));
  for (const scope of new Set([...beforeScopes, ...afterScopes])) {
    const delta = (afterScopes.includes(scope) ? 1 : 0) - (beforeScopes.includes(scope) ? 1 : 0);
    if (delta === 0 && !reordered) continue;
    items.push({
      Update: {
        TableName: table,
        Key: counterKey(scope, after.id),
        UpdateExpression: 'ADD n :delta, v :one',
        ExpressionAttributeValues: { ':delta': delta, ':one': 1 },
      },
    });
  }
  items.push(...extra);
  try {
    await transactWrite(items);
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    const failed = cancelledIndexes(error);
    if (failed.includes(0)) {
      throw before
        ? conflict('the account was changed by another request; read it again and retry')
        : conflict('an account with this email already exists');
    }
    if (failed.includes(claimIndex)) throw conflict('an account with this email already exists');
    // An extra item's condition (a token already used, say): the caller decides what that means.
    throw conflict('the request conflicts with the current state; retry');
  }
}

/** A user by id; `consistent`: a strongly consistent read (a write just committed elsewhere is seen). */
export async function getUser(id: string, options: { consistent?: boolean } = {}): Promise<UserRecord | undefined> {
  const out = await db().send(
    new GetCommand({
      TableName: mainTableName(),
      Key: userKey(id),
      ...(options.consistent ? { ConsistentRead: true } : {}),
    }),
  );
  return out.Item ? toRecord(out.Item) : undefined;
}

export async function findUserByEmail(email: string): Promise<UserRecord | undefined> {
  const claim = await db().send(new GetCommand({ TableName: mainTableName(), Key: emailKey(email) }));
  const userId = claim.Item?.['user_id'];
  return typeof userId === 'string' ? getUser(userId) : undefined;
}

/**
 * The same two reads whether or not the address has an account (the claim, then the user it names or an id nobody
 * has), for operations whose answer must not tell the two apart by the work done (A10).
 */
export async function findUserByEmailEvenly(email: string): Promise<UserRecord | undefined> {
  const claim = await db().send(new GetCommand({ TableName: mainTableName(), Key: emailKey(email) }));
  const userId = claim.Item?.['user_id'];
  const user = await getUser(typeof userId === 'string' ? userId : newUuid());
  return typeof userId === 'string' ? user : undefined;
}

/** The generation a token must carry to be valid, or null when the user is gone or deleted. */
export async function currentTokenGeneration(userId: string): Promise<number | null> {
  const out = await db().send(
    new GetCommand({
      TableName: mainTableName(),
      Key: userKey(userId),
      ProjectionExpression: 'token_gen, deleted_at',
    }),
  );
  if (!out.Item || out.Item['deleted_at']) return null;
  return Number(out.Item['token_gen'] ?? 1);
}

/** Invalidates every bearer token and refresh family the user holds. */
export async function bumpTokenGeneration(userId: string): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const user = await getUser(userId);
    if (!user) return;
    try {
      await updateUser(user, { token_gen: user.token_gen + 1 });
      return;
    } catch (error) {
      if (attempt === 2) throw error;
    }
  }
}

/** A listing's maintained size and version: one GetItem, whatever the size of the scope. */
export async function userListing(scope: string): Promise<{ scope: string; count: number; version: number }> {
  if (scope === ALL_USERS) {
    // The shards' sums: each shard's version only grows, so their sum moves whenever any of them does.
    const shards = await getAll(
      mainTableName(),
      userShards.map((shard) => ({ PK: `COUNT#${shard}`, SK: 'COUNT' })),
    );
    const sum = (member: string) => shards.reduce((total, item) => total + Number(item[member] ?? 0), 0);
    return { scope, count: Math.max(0, sum('n')), version: sum('v') };
  }
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: counterKey(scope) }));
  return { scope, count: Math.max(0, Number(out.Item?.['n'] ?? 0)), version: Number(out.Item?.['v'] ?? 0) };
}

/** Up to `limit` users whose index key in `index` starts with `prefix` (bounded prefix search). */
export async function usersByPrefix(index: 'GSI3' | 'GSI4', prefix: string, limit: number): Promise<UserRecord[]> {
  const shards = await mapLimited(userShards, USER_SHARDS, async (shard) => {
    const out = await db().send(
      new QueryCommand({
        TableName: mainTableName(),
        IndexName: index,
        KeyConditionExpression: '#pk = :all AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': `${index}PK`, '#sk': `${index}SK` },
        ExpressionAttributeValues: { ':all': shard, ':prefix': prefix.toLowerCase() },
        Limit: limit,
      }),
    );
    return out.Items ?? [];
  });
  // The first `limit` in the index's order, as one partition's Query would have them.
  const sk = `${index}SK`;
  const merged = shards.flat().sort((a, b) => (String(a[sk]) < String(b[sk]) ? -1 : 1));
  return merged.slice(0, limit).map(toRecord);
}

const INDEX_ATTRIBUTES = new RegExp(`^(PK|SK|GSI\\dPK|GSI\\dSK|entity|email_lc|${WRITE_TOKEN})$`);

export function toRecord(item: Item): UserRecord {
  return Object.fromEntries(
    Object.entries(item).filter(([key]) => !INDEX_ATTRIBUTES.test(key)),
  ) as unknown as UserRecord;
}

/** The public view of a user (A1 `user`, A16, X9): never a hash, never a token. */
export function toUserView(user: UserRecord) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    phone_number: user.phone_number,
    roles: user.roles,
    org_id: user.org_id,
    confirmed_at: user.confirmed_at,
    created_at: user.created_at,
    updated_at: user.updated_at,
    ...(user.deleted_at ? { deleted_at: user.deleted_at } : {}),
    ...(user.driver_profile
      ? { driver_profile: toDriverProfileView({ ...user, driver_profile: user.driver_profile }) }
      : {}),
  };
}

/** `updated_at` for a change of `user`: now, but always later than before, so the write condition stays exact. */
export function nextUpdatedAt(user: UserRecord): string {
  const now = clock.nowMs();
  const before = Date.parse(user.updated_at);
  return new Date(Math.max(now, before + 1)).toISOString();
}

/** Applies `changes` to `user` and saves it; throws 409 if the user changed in between. */
export async function updateUser(
  user: UserRecord,
  changes: Partial<UserRecord>,
  extra: TransactItem[] = [],
): Promise<UserRecord> {
  const after: UserRecord = { ...user, ...changes, updated_at: nextUpdatedAt(user) };
  await saveUser(user, after, extra);
  return after;
}

/**
 * X15's write: the driver's duty state alone, in one UpdateItem, on the condition that the user is still as read.
 * `updated_at` stays: five user indexes project it, and moving it made a toggle cost 7 WCU instead of 2 (the user
 * item is over 1 KB), for a change no listing shows. A whole-item write made from a read before the toggle (saveUser) still
 * fails rather than put the old duty state back: its condition includes the duty state's stamp (asRead).
 * `version_rev` stays too: the profile's members a driver edits (A21) did not change. Undefined when the user
 * changed since it was read (the caller reads it again).
 */
export async function saveDriverDuty(user: UserRecord, onDuty: boolean): Promise<UserRecord | undefined> {
  const profile = user.driver_profile;
  if (!profile) throw new Error('saveDriverDuty: the user has no driver profile');
  // Always later than the stamp it replaces, so that the stamp identifies the state exactly (as nextUpdatedAt).
  const since = new Date(
    Math.max(clock.nowMs(), Date.parse(profile.on_duty_since ?? user.created_at) + 1),
  ).toISOString();
  const condition = asRead(user);
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: userKey(user.id),
        UpdateExpression: 'SET driver_profile.on_duty = :onDuty, driver_profile.on_duty_since = :since',
        ConditionExpression: condition.ConditionExpression,
        ExpressionAttributeValues: { ...condition.ExpressionAttributeValues, ':onDuty': onDuty, ':since': since },
      }),
    );
  } catch (error) {
    if (isConditionalFailure(error)) return undefined;
    throw error;
  }
  return { ...user, driver_profile: { ...profile, on_duty: onDuty, on_duty_since: since } };
}
