/**
 * Users: repository and the domain rules that only need the repository. Keys are built here and nowhere else.
 *
 * Items: the user `USER#<id> / PROFILE`; the email claim `EMAIL#<lowercased email> / EMAIL`, written in the same
 * transaction so that two sign-ups with one address cannot both succeed.
 */
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DRIVERS, type Role } from '#shared/auth/roles';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { conflict } from '#shared/http/problems';
import { newSecret, newUuid } from '#shared/ids';

export interface DriverProfile {
  version_rev: string;
  service_types: string[];
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
}

export const userKey = (id: string) => ({ PK: `USER#${id}`, SK: 'PROFILE' });
const emailKey = (email: string) => ({ PK: `EMAIL#${email.toLowerCase()}`, SK: 'EMAIL' });
const orgUsersIndexKeys = (user: Pick<UserRecord, 'org_id' | 'created_at' | 'id'>) =>
  user.org_id ? { GSI1PK: `ORG#${user.org_id}#USERS`, GSI1SK: `${user.created_at}#${user.id}` } : {};

export const newDriverProfile = (): DriverProfile => ({ version_rev: `1-${newSecret(6)}`, service_types: [] });

export interface NewUser {
  email: string;
  name: string;
  phone_number?: number | null;
  roles: Role[];
  org_id?: string | null;
  password_hash?: string;
  confirmed_at?: string | null;
}

/** Creates a user and claims its email atomically; a taken address is a 409. */
export async function createUser(input: NewUser): Promise<UserRecord> {
  const now = clock.nowIso();
  const user: UserRecord = {
    id: newUuid(),
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
  };
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: mainTableName(),
              Item: { ...emailKey(user.email), entity: 'email', user_id: user.id },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          {
            Put: {
              TableName: mainTableName(),
              Item: { ...userKey(user.id), ...orgUsersIndexKeys(user), entity: 'user', ...user },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
        ],
      }),
    );
  } catch (error) {
    if (isConditionalFailure(error)) throw conflict('an account with this email already exists', 'email_taken');
    throw error;
  }
  return user;
}

export async function getUser(id: string): Promise<UserRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: userKey(id) }));
  return out.Item ? toRecord(out.Item) : undefined;
}

export async function findUserByEmail(email: string): Promise<UserRecord | undefined> {
  const claim = await db().send(new GetCommand({ TableName: mainTableName(), Key: emailKey(email) }));
  const userId = claim.Item?.['user_id'];
  return typeof userId === 'string' ? getUser(userId) : undefined;
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
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: userKey(userId),
        UpdateExpression: 'ADD token_gen :one',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}

function toRecord(item: Record<string, unknown>): UserRecord {
  const { PK: _pk, SK: _sk, GSI1PK: _g1, GSI1SK: _g1s, GSI2PK: _g2, GSI2SK: _g2s, entity: _e, ...rest } = item;
  return rest as unknown as UserRecord;
}

/** The public view of a user (A1 `user`, A16, X9): never the hash, never a token. */
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
    ...(user.driver_profile ? { driver_profile: user.driver_profile } : {}),
  };
}
