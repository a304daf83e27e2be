/**
 * Self-registration (A2 drivers, X1 merchants) and confirmation by security code (A3 request, X8 verify).
 *
 * A security code is 6 digits, valid 10 minutes, single use; a new request replaces the old code (which then answers
 * 410), and five wrong tries void the code. Only its hash is stored, in `SECCODE#<user id> / CODE`.
 */
import { createHash, randomInt } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { sendSecurityCode, welcomeMail } from '#shared/accounts/mails';
import { buildOrganisationItem } from '#shared/accounts/organisations';
import { deliverOutboxMail, outboxMail } from '#shared/accounts/outbox';
import { createUser, findUserByEmail, type UserRecord, updateUser } from '#shared/accounts/users';
import { hashPassword } from '#shared/auth/passwords';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { conflict, gone, invalidAt, isDomainError } from '#shared/errors';
import { currentIdSeed } from '#shared/ids';

export const SECURITY_CODE_TTL_MS = 10 * 60 * 1000;
export const SECURITY_CODE_MAX_TRIES = 5;

interface Registration {
  email: string;
  password: string;
  name: string;
  phone_number?: number | null | undefined;
}

/** A2: a freelance driver, unconfirmed until A3 + X8. */
export async function registerDriver(input: Registration): Promise<UserRecord> {
  // The welcome is written with the account and sent after it: held in the outbox if mail is down.
  const welcome = outboxMail(welcomeMail(input.email, input.name));
  const user = await createUser(
    {
      email: input.email,
      name: input.name,
      phone_number: input.phone_number ?? null,
      roles: ['Driver'],
      password_hash: await hashPassword(input.password),
      self_registered: true,
    },
    [welcome.put],
  );
  await deliverOutboxMail(welcome);
  return user;
}

/** X1: a merchant organisation and its first `Merchant` user, written in one transaction. */
export async function registerMerchant(input: Registration): Promise<UserRecord> {
  const org = buildOrganisationItem({ name: input.name, kind: 'merchant' });
  const welcome = outboxMail(welcomeMail(input.email, input.name));
  const user = await createUser(
    {
      email: input.email,
      name: input.name,
      phone_number: input.phone_number ?? null,
      roles: ['Merchant'],
      org_id: org.record.id,
      password_hash: await hashPassword(input.password),
      self_registered: true,
    },
    [{ Put: org.put }, welcome.put],
  );
  await deliverOutboxMail(welcome);
  return user;
}

const codeKey = (userId: string) => ({ PK: `SECCODE#${userId}`, SK: 'CODE' });
const hashCode = (userId: string, code: string) => createHash('sha256').update(`${userId}:${code}`).digest('hex');

/**
 * A3. Answers the same whether or not the address exists or is already confirmed (no account enumeration); a
 * phone number, when the account has one and the request names one, must match.
 */
export async function requestSecurityCode(email: string, phone: string | null | undefined): Promise<void> {
  const user = await findUserByEmail(email);
  if (!user || user.deleted_at || user.confirmed_at) return;
  if (phone && user.phone_number !== null && phone.replace(/\D/g, '') !== String(user.phone_number)) return;
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const previous = await db().send(new GetCommand({ TableName: mainTableName(), Key: codeKey(user.id) }));
  const retired = [previous.Item?.['code_hash'], ...((previous.Item?.['retired'] as string[] | undefined) ?? [])]
    .filter((hash): hash is string => typeof hash === 'string')
    .slice(0, 10);
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: {
        ...codeKey(user.id),
        entity: 'security_code',
        code_hash: hashCode(user.id, code),
        status: 'active',
        tries: 0,
        retired,
        expires_at_ms: clock.nowMs() + SECURITY_CODE_TTL_MS,
        expires_at: clock.nowEpochSeconds() + 24 * 3600,
      },
    }),
  );
  await sendSecurityCode(user.email, code);
}

/** X8: a right code confirms the account; a wrong one is 400; used, replaced, expired or voided is 410. */
export async function verifySecurityCode(email: string, code: string): Promise<UserRecord> {
  const wrong = () => invalidAt('user.security_code', 'is not the code that was sent');
  const user = await findUserByEmail(email);
  if (!user || user.deleted_at) throw wrong();
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: codeKey(user.id) }));
  const item = out.Item;
  // A code that was used, replaced, expired or voided is 410 whatever the account's state (also once it confirmed
  // the account); only then does a confirmed account answer 409.
  const presented = hashCode(user.id, code);
  if (item && ((item['retired'] as string[] | undefined) ?? []).includes(presented)) {
    throw gone('this code was replaced by a newer one');
  }
  // This very request (same key and body), retried after its answer was lost: the account is confirmed.
  const seed = currentIdSeed();
  if (item?.['status'] === 'used' && presented === item['code_hash'] && seed !== undefined && item['used_by'] === seed)
    return user;
  if (item?.['status'] === 'used' && presented === item['code_hash']) throw gone('this code was already used');
  if (user.confirmed_at) throw conflict('the account is already confirmed');
  if (!item) throw wrong();
  if (item['status'] === 'used') throw gone('this code was already used');
  if (item['status'] === 'void') throw gone('this code was voided after too many wrong tries; ask for a new one');
  if (Number(item['expires_at_ms']) <= clock.nowMs()) throw gone('this code has expired; ask for a new one');
  if (presented !== item['code_hash']) {
    await countWrongTry(user.id);
    throw wrong();
  }
  try {
    return await updateUser(user, { confirmed_at: clock.nowIso() }, [
      {
        Update: {
          TableName: mainTableName(),
          Key: codeKey(user.id),
          UpdateExpression: `SET #status = :used${seed === undefined ? '' : ', used_by = :by'}`,
          ConditionExpression: '#status = :active AND code_hash = :hash',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':used': 'used',
            ':active': 'active',
            ':hash': presented,
            ...(seed === undefined ? {} : { ':by': seed }),
          },
        },
      },
    ]);
  } catch (error) {
    if (isDomainError(error, 'conflict')) throw gone('this code was already used');
    throw error;
  }
}

async function countWrongTry(userId: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: codeKey(userId),
        UpdateExpression: 'SET tries = tries + :one, #status = if_not_exists(#status, :active)',
        ConditionExpression: '#status = :active',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':one': 1, ':active': 'active' },
      }),
    );
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: codeKey(userId),
        UpdateExpression: 'SET #status = :void',
        ConditionExpression: '#status = :active AND tries >= :max',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':void': 'void', ':active': 'active', ':max': SECURITY_CODE_MAX_TRIES },
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}
