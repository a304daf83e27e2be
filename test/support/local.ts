/**
 * Per-file wiring to the shared emulators: a fresh table namespace, the functions' environment, and (for end-to-end
 * files) a started local host on a random port.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { inject } from 'vitest';
import { ensureTables } from '../../lib/local/emulators.ts';
import { localEnvironment, type RunningHost, startLocal } from '../../lib/local/start.ts';

export const ADMIN = { email: 'admin@test.local', password: 'admin-password-for-tests' };

/** Creates this file's tables and points the functions at them. Call in beforeAll, before loading any handler. */
export async function useLocalServices(): Promise<{ prefix: string }> {
  const endpoints = inject('endpoints');
  const prefix = `t${randomBytes(4).toString('hex')}-`;
  const names = await ensureTables(endpoints.dynamodb, prefix);
  localEnvironment(endpoints, names, join(inject('dataDir'), prefix));
  process.env['TOKEN_GENERATION_CACHE_MS'] = '0';
  return { prefix };
}

/**
 * A whole local host on a random port, over the shared emulators, with a seeded SysAdmin; `dynamodb` puts another
 * endpoint in front of the shared DynamoDB (a fault proxy: test/support/fault-proxy.ts).
 */
export async function startTestHost(options: { dynamodb?: string } = {}): Promise<RunningHost> {
  const endpoints = inject('endpoints');
  process.env['TOKEN_GENERATION_CACHE_MS'] = '0';
  return startLocal({
    port: 0,
    dataDir: join(inject('dataDir'), `host-${randomBytes(4).toString('hex')}`),
    fresh: false,
    persistent: false,
    adminEmail: ADMIN.email,
    adminPassword: ADMIN.password,
    tablePrefix: `e${randomBytes(4).toString('hex')}-`,
    endpoints: { dynamodb: options.dynamodb ?? endpoints.dynamodb },
  });
}
