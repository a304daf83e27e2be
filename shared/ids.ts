import { randomBytes, randomUUID } from 'node:crypto';
import { clock } from '#shared/clock';

/** UUID v4, for users, organisations, roles, plannings, pairs and plan jobs. */
export const newUuid = (): string => randomUUID();

/** 24 lowercase hex characters ordered by time, like a Mongo ObjectId: 4-byte seconds + 8 random bytes. */
export function newObjectId(): string {
  const seconds = Math.floor(clock.nowMs() / 1000)
    .toString(16)
    .padStart(8, '0');
  return seconds + randomBytes(8).toString('hex');
}

/** An opaque secret of at least 256 bits, URL-safe. */
export const newSecret = (bytes = 32): string => randomBytes(bytes).toString('base64url');
