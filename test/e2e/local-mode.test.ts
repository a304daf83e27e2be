/**
 * Local mode as a user meets it (contract section 5, issue 24.3): the in-process S3 keeps its port across restarts
 * (`S3_PORT`), so a presigned URL issued before a restart still works after it; what `npm start` keeps (its own
 * data folder) survives a restart, the mail outbox with it.
 */
import { describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/emulators.ts';
import { startLocal } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { client, loginAs } from '../support/http.ts';
import { putUpload } from '../support/imports.ts';
import { ADMIN } from '../support/local.ts';
import { CSV, created, merchantOn, options, running } from '../support/local-mode.ts';
import { npmStart } from '../support/npm-start.ts';

describe('the local S3', () => {
  it('keeps its port across a restart: a presigned URL issued before it works after it', async () => {
    const s3Port = await freePort();
    const first = options({ s3Port });
    const before = await startLocal(first);
    expect(before.s3Endpoint).toBe(`http://127.0.0.1:${s3Port}`);
    const merchant = await merchantOn(before);
    const file = await merchant.uploadUrl();
    await before.stop();

    const after = await startLocal(first);
    running.push(after);
    expect(after.s3Endpoint).toBe(before.s3Endpoint);
    expect((await putUpload(file.url, CSV)).status).toBe(200);
    const job = await created(() => merchant.createJob(file.storage_upload_key, after));
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    expect((job.body as { upload_record: { files: { file_size: number }[] } }).upload_record.files[0]!.file_size).toBe(
      CSV.length,
    );
  });
});

describe('npm start’s data folder', () => {
  it('keeps the mail outbox across a restart: an invitation sent before it can be accepted after it', async () => {
    const service = await npmStart({
      env: { DISPATCH_ADMIN_EMAIL: ADMIN.email, DISPATCH_ADMIN_PASSWORD: ADMIN.password },
      name: 'outbox-restart',
    });
    running.push(service);
    const api = client(service.url);
    const email = `invited.${Math.random().toString(36).slice(2, 10)}@example.com`;
    const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
    const org = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Kept', kind: 'merchant' }, admin))
      .body.id;
    const invited = await api.post(
      '/v1/admin/invitations',
      { user: { email, org_id: org, role_id: ROLES.Merchant } },
      admin,
    );
    expect(invited.status).toBe(201);
    await service.restart();
    const mails = await api.get<{ messages: { kind: string; data: Record<string, string> }[] }>(
      `/_local/outbox?to=${encodeURIComponent(email)}`,
    );
    expect(mails.body.messages.map((m) => m.kind)).toEqual(['invitation']);
    const accepted = await api.post('/v1/auth/accept-invitation', {
      user: {
        name: 'Kept User',
        password: 'a-good-long-password',
        invitation_token: mails.body.messages[0]!.data['invitation_token'],
      },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  }, 120_000);
});
