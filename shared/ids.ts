import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
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

/**
 * Ids of records that a create makes, safe to retry after a lost answer (docs/idempotency.md). A request that carries
 * an `Idempotency-Key` runs inside `withIdSeed` with a seed derived from (operation, caller, key, body); inside it,
 * `recordUuid` and `recordObjectId` derive their ids from that seed and a counter instead of drawing them at random,
 * so the retry of a create whose answer was lost builds the same ids, its conditional Put finds the record the first
 * attempt wrote, and that is answered instead of a second record (shared/db/client.ts, `ownRetriedWrites`). Without
 * a seed they are `newUuid` and `newObjectId`.
 */
interface Seeded {
  seed: string;
  drawn: number;
  ids: Set<string>;
}
const seeded = new AsyncLocalStorage<Seeded>();

export function withIdSeed<T>(seed: string | undefined, run: () => Promise<T>): Promise<T> {
  return seed === undefined ? run() : seeded.run({ seed, drawn: 0, ids: new Set() }, run);
}

function nextSeededHex(scope: Seeded): string {
  scope.drawn += 1;
  return createHash('sha256').update(`${scope.seed}#${scope.drawn}`).digest('hex');
}

function uuidOf(hex: string): string {
  const variant = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A UUID (v4 layout) for a created record: derived from the request's seed when it has one. */
export function recordUuid(): string {
  const scope = seeded.getStore();
  if (!scope) return newUuid();
  const id = uuidOf(nextSeededHex(scope));
  scope.ids.add(id);
  return id;
}

/**
 * A UUID for the record a create makes for `name` (a user for an e-mail address, say): derived from the request's
 * seed and the name, not a counter, so it is the same on a retry whatever order the request's parallel creates (A8's
 * bulk invitations) ran in.
 */
export function recordUuidFor(name: string): string {
  const scope = seeded.getStore();
  if (!scope) return newUuid();
  const id = uuidOf(createHash('sha256').update(`${scope.seed}#for#${name}`).digest('hex'));
  scope.ids.add(id);
  return id;
}

/** An ObjectId for a created record: derived from the request's seed when it has one (then not ordered by time). */
export function recordObjectId(): string {
  const scope = seeded.getStore();
  if (!scope) return newObjectId();
  const id = nextSeededHex(scope).slice(0, 24);
  scope.ids.add(id);
  return id;
}

/**
 * An identifier (not a secret: a client key, say) in `newSecret`'s format: derived from the request's seed when it
 * has one, so the retry of a create names the record its first attempt wrote.
 */
export function recordKey(bytes: number): string {
  const scope = seeded.getStore();
  if (!scope) return newSecret(bytes);
  const key = Buffer.from(nextSeededHex(scope), 'hex').subarray(0, bytes).toString('base64url');
  scope.ids.add(key);
  return key;
}

/**
 * The seed of the current request (undefined without an Idempotency-Key): a single-use secret records the seed of
 * the request that used it, so that this same request, retried after its answer was lost, is known as the user.
 */
export const currentIdSeed = (): string | undefined => seeded.getStore()?.seed;

/** True when `text` holds an id drawn from the current request's seed (a key of a record this create makes). */
export function holdsSeededId(text: string): boolean {
  const scope = seeded.getStore();
  if (!scope) return false;
  for (const id of scope.ids) if (text.includes(id)) return true;
  return false;
}
