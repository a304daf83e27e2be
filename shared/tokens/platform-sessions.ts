/** T10: a session for a user of a platform organisation, named by the `X-Platform-ID` header. */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { verifyCredentials } from '#shared/accounts/login';
import { clock } from '#shared/clock';
import { db, mainTableName } from '#shared/db/client';
import { forbidden } from '#shared/errors';
import { newUuid } from '#shared/ids';

export const PLATFORM_SESSION_TTL_SECONDS = 30 * 24 * 3600;

export async function createPlatformSession(platformId: string, email: string, password: string) {
  const user = await verifyCredentials(email, password);
  if (user.org_id !== platformId) throw forbidden('the account does not belong to this platform');
  const sessionId = newUuid();
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: {
        PK: `PSESSION#${sessionId}`,
        SK: 'SESSION',
        entity: 'platform_session',
        session_id: sessionId,
        user_id: user.id,
        org_id: platformId,
        created_at: clock.nowIso(),
        expires_at: clock.nowEpochSeconds() + PLATFORM_SESSION_TTL_SECONDS,
      },
    }),
  );
  return { session_id: sessionId, org_id: platformId };
}
