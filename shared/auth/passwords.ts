/**
 * Passwords: argon2id at OWASP's recommended minimum (19 MiB memory, 2 iterations, parallelism 1), in the PHC string
 * format. hash-wasm is pure WebAssembly, so it bundles into every function without a native build for Lambda.
 */
import { randomBytes } from 'node:crypto';
import { argon2id, argon2Verify } from 'hash-wasm';

const PARAMS = { memorySize: 19_456, iterations: 2, parallelism: 1, hashLength: 32 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2id({ password, salt: randomBytes(16), ...PARAMS, outputType: 'encoded' });
}

export async function verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
  if (!hash) {
    // Spend the same time for an unknown account as for a wrong password: no timing oracle on emails.
    await argon2id({ password, salt: DUMMY_SALT, ...PARAMS, outputType: 'hex' });
    return false;
  }
  try {
    return await argon2Verify({ password, hash });
  } catch {
    return false;
  }
}

const DUMMY_SALT = randomBytes(16);
