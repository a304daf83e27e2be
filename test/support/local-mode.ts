/**
 * Local hosts for the local-mode tests (test/e2e/local-*.test.ts): each file gets its own process, so the functions'
 * cached S3 client points at the one S3 that file uses.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, inject } from 'vitest';
import type { LocalOptions, RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { client, invitedMember, loginAs } from './http.ts';
import { IMPORT_WINDOW } from './imports.ts';
import { ADMIN } from './local.ts';

export const running: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const r of running.reverse()) await r.stop();
});

export const options = (extra: Partial<LocalOptions>): LocalOptions => ({
  port: 0,
  dataDir: join(inject('dataDir'), `local-${randomBytes(4).toString('hex')}`),
  fresh: false,
  persistent: false,
  adminEmail: ADMIN.email,
  adminPassword: ADMIN.password,
  tablePrefix: `m${randomBytes(4).toString('hex')}-`,
  endpoints: { dynamodb: inject('endpoints').dynamodb },
  ...extra,
});

/** A merchant of a fresh organisation on `host`, and a helper that asks it for an upload URL. */
export async function merchantOn(host: RunningHost) {
  const api = client(host.url);
  const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Shop', kind: 'merchant' }, admin))
    .body.id;
  const token = (await invitedMember(api, admin, 'Merchant', ROLES.Merchant, org)).token;
  const uploadUrl = async () =>
    (
      await api.get<{ file: { url: string; storage_upload_key: string } }>(
        '/v1/task-import-jobs/upload-url?filename=tasks.csv',
        token,
      )
    ).body.file;
  const createJob = (key: string, on = host) =>
    client(on.url).post<{ upload_record: { files: { file_size: number }[] } }>(
      '/v1/task-import-jobs',
      {
        files: [{ storage_upload_key: key }],
        ...IMPORT_WINDOW,
      },
      token,
    );
  return { token, uploadUrl, createJob };
}

/** I4b answers 201 once the upload is recorded; before that, the upload is unknown. */
export async function created(create: () => Promise<{ status: number; body: unknown }>) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await create();
    if (answer.status === 201 || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 200));
  }
}

export const CSV = Buffer.from('task_ref,from_street_address\nT1,1 Depot Rd\n');
