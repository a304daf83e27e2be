/**
 * Signing-key rotation (issue 25.6; docs/key-rotation.md). The signing-key secret holds a key set in which each key
 * has a state: `next` (listed, verifies, does not sign yet), `current` (signs, exactly one) and `previous` (verifies
 * tokens it signed until they have all expired). Every container caches the set for at most `KEY_CACHE_TTL_MS`
 * (shared/auth/keys.ts), so one rotation step is safe only when:
 * - a `next` key becomes `current` once it has been listed longer than every container's cache can be old: by then
 *   every container verifies it, whichever container signed the token;
 * - a `previous` key is dropped once every token it can have signed has expired: its retirement, plus the cache age
 *   of a container still signing with it, plus the longest token lifetime.
 * `rotateKeySet` is that state machine, pure (time and the new key are its arguments); the rotation function
 * (functions/auth/rotate-signing-keys.ts) runs it in Secrets Manager's four steps on the rotation schedule.
 */
import type { JWK } from 'jose';

export type KeyState = 'next' | 'current' | 'previous';

export interface StoredKey extends JWK {
  kid: string;
  state?: KeyState;
  /** ISO times: when the key was listed, when it began to sign, when it stopped signing. */
  created_at?: string;
  promoted_at?: string;
  retired_at?: string;
}

export interface KeySet {
  keys: StoredKey[];
}

/** The longest a container keeps a key set before it reads the secret again. */
export const KEY_CACHE_TTL_MS = 5 * 60_000;
/** Allowance for clocks that disagree (Lambda hosts and Secrets Manager). */
export const CLOCK_SKEW_MS = 60_000;
/**
 * The longest-lived token the keys sign: the bearer token, an hour at most (shared/config.ts bounds `BEARER_TTL_S`
 * to 3600). Refresh tokens, one-time tokens and page tokens are not signed with these keys.
 */
export const MAX_TOKEN_LIFETIME_MS = 3600 * 1000;
/** A `next` key signs only after this long in the set. */
export const PROMOTE_AFTER_MS = KEY_CACHE_TTL_MS + CLOCK_SKEW_MS;
/** A `previous` key is dropped this long after it stopped signing. */
export const DROP_AFTER_MS = KEY_CACHE_TTL_MS + MAX_TOKEN_LIFETIME_MS + CLOCK_SKEW_MS;
/** The rotation schedule: one step per run, so a key is `next`, then `current`, then `previous` for this long each. */
export const ROTATION_INTERVAL_DAYS = 30;

const ORDER: Record<KeyState, number> = { current: 0, next: 1, previous: 2 };

/**
 * The set with a state on every key, `current` first (the order code older than the states reads: first signs).
 * A set written before states existed: its first key is current, the rest previous (retired now, so kept a while).
 */
export function normalizeKeySet(set: KeySet, nowMs: number): KeySet {
  const now = new Date(nowMs).toISOString();
  const stated = set.keys.some((key) => key.state === 'current');
  const keys = set.keys.map((key, index): StoredKey => {
    if (stated && key.state) return key;
    if (index === 0 && !stated) return { ...key, state: 'current', promoted_at: key.promoted_at ?? now };
    return { ...key, state: 'previous', retired_at: key.retired_at ?? now };
  });
  return { keys: keys.sort((a, b) => ORDER[a.state!] - ORDER[b.state!]) };
}

/** The key that signs: the `current` one, or the first of a set without states. */
export function signingKeyOf(set: KeySet): StoredKey | undefined {
  return set.keys.find((key) => key.state === 'current') ?? set.keys[0];
}

export interface RotationOutcome {
  set: KeySet;
  /** What the step did, for the log: `added <kid>`, `promoted <kid>`, `retired <kid>`, `dropped <kid>`. */
  changes: string[];
}

const age = (iso: string | undefined, nowMs: number) => (iso ? nowMs - Date.parse(iso) : Number.POSITIVE_INFINITY);

/**
 * One rotation step at `nowMs`: drop the `previous` keys past their last token, promote a `next` key listed longer
 * than a cache lives (the `current` one becomes `previous`), and list `fresh` as `next` when none is. An empty or
 * unreadable set (a secret never filled) becomes `fresh` alone, signing.
 */
export function rotateKeySet(stored: KeySet | undefined, nowMs: number, fresh: StoredKey): RotationOutcome {
  const now = new Date(nowMs).toISOString();
  if (!stored || stored.keys.length === 0) {
    return {
      set: { keys: [{ ...fresh, state: 'current', created_at: now, promoted_at: now }] },
      changes: [`added ${fresh.kid} as current`],
    };
  }
  const changes: string[] = [];
  let keys = normalizeKeySet(stored, nowMs).keys.filter((key) => {
    const gone = key.state === 'previous' && age(key.retired_at, nowMs) >= DROP_AFTER_MS;
    if (gone) changes.push(`dropped ${key.kid}`);
    return !gone;
  });
  const next = keys.find((key) => key.state === 'next');
  if (next && age(next.created_at, nowMs) >= PROMOTE_AFTER_MS) {
    keys = keys.map((key) => {
      if (key === next) {
        changes.push(`promoted ${key.kid}`);
        return { ...key, state: 'current', promoted_at: now };
      }
      if (key.state === 'current') {
        changes.push(`retired ${key.kid}`);
        return { ...key, state: 'previous', retired_at: now };
      }
      return key;
    });
  }
  if (!keys.some((key) => key.state === 'next')) {
    keys.push({ ...fresh, state: 'next', created_at: now });
    changes.push(`added ${fresh.kid}`);
  }
  return { set: { keys: keys.sort((a, b) => ORDER[a.state!] - ORDER[b.state!]) }, changes };
}

/**
 * Why `pending` may not replace `current` (Secrets Manager's testSecret step), or null when it may: exactly one
 * signing key, every key an ES256 private key with a unique kid, and no key that may sign or verify a live token
 * lost — every `current` and `next` key of the current set is still there, and a `previous` one only goes when
 * `rotateKeySet` would drop it.
 */
export function rotationProblem(current: KeySet | undefined, pending: KeySet, nowMs: number): string | null {
  const signing = pending.keys.filter((key) => key.state === 'current');
  if (signing.length !== 1) return `the pending set has ${signing.length} current keys, not one`;
  const kids = new Set<string>();
  for (const key of pending.keys) {
    if (!key.kid || kids.has(key.kid)) return `a pending key has no kid or a repeated one (${key.kid})`;
    kids.add(key.kid);
    if (key.kty !== 'EC' || key.crv !== 'P-256' || !key.d || !key.x || !key.y) {
      return `pending key ${key.kid} is not an ES256 private key`;
    }
    if (!key.state || !(key.state in ORDER)) return `pending key ${key.kid} has no state`;
  }
  if (!current || current.keys.length === 0) return null;
  for (const key of normalizeKeySet(current, nowMs).keys) {
    if (kids.has(key.kid)) continue;
    if (key.state !== 'previous' || age(key.retired_at, nowMs) < DROP_AFTER_MS) {
      return `the pending set drops ${key.state} key ${key.kid}, which may still sign or verify live tokens`;
    }
  }
  return null;
}

/** The secret's value read as a key set; undefined for anything else (what CloudFormation generated, say). */
export function parseKeySet(value: string | undefined): KeySet | undefined {
  try {
    const parsed = JSON.parse(value ?? '') as Partial<KeySet>;
    return Array.isArray(parsed.keys) && parsed.keys.length > 0 ? (parsed as KeySet) : undefined;
  } catch {
    return undefined;
  }
}
