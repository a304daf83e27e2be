import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, for entry files and the lock file. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
