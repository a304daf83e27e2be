import type { Client } from './http.ts';
import { until } from './until.ts';

/** The delivery window every test import job uses (I4a/I4b's required members besides the files). */
export const IMPORT_WINDOW = {
  start_timezone: 'Asia/Singapore',
  start_time: '2026-11-22T00:00:00+08:00',
  end_timezone: 'Asia/Singapore',
  end_time: '2026-11-22T23:00:00+08:00',
  service_type: 'van_1.7m',
};

/**
 * PUTs a file to an I1 upload URL as an app must: with `Content-Type: text/csv`, which the URL signs (S3 refuses a PUT
 * without it, or with another type; the local S3 does not check, so only this keeps the tests honest).
 */
export const putUpload = (url: string, body: string | Buffer) =>
  fetch(url, { method: 'PUT', body, headers: { 'content-type': 'text/csv' } });

const TASKS_HEADER =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone';
const TASK_WINDOWS =
  '2026-11-22T01:00:00Z,2026-11-22T03:00:00Z,Asia/Singapore,2026-11-22T04:00:00Z,2026-11-22T06:00:00Z,Asia/Singapore';

/**
 * Imports one task per ref as `token`'s organisation, through the upload URL, I4b, I6 and the real worker; answers
 * the tasks' ids in file order once the job has completed (it throws otherwise).
 */
export async function importTasks(api: Client, token: string, refs: string[]): Promise<string[]> {
  return (await importCsv(api, token, tasksCsv(refs))).taskIds;
}

/** A tasks file of one task per ref (the required columns, no coordinates). */
export const tasksCsv = (refs: string[]) =>
  [
    TASKS_HEADER,
    ...refs.map((ref, i) => `${ref},${i + 1} Depot Way,Singapore,SG,1 Mall,Singapore,SG,${TASK_WINDOWS}`),
  ].join('\n');

/** Imports a whole tasks file as one job (`IMPORT_WINDOW`'s service type): its id and its tasks' ids in file order. */
export async function importCsv(api: Client, token: string, csv: string) {
  const link = await api.get<{ file: { url: string; storage_upload_key: string } }>(
    '/v1/task-import-jobs/upload-url?filename=tasks.csv',
    token,
  );
  const put = await putUpload(link.body.file.url, csv);
  if (put.status !== 200) throw new Error(`the upload answered ${put.status}`);
  const job = await api.post<{ id: string }>(
    '/v1/task-import-jobs',
    { files: [{ storage_upload_key: link.body.file.storage_upload_key }], ...IMPORT_WINDOW },
    token,
  );
  if (job.status !== 201) throw new Error(`I4b answered ${job.status} ${JSON.stringify(job.body)}`);
  await api.post(`/v1/task-import-jobs/${job.body.id}/start`, {}, token);
  const status = await until(
    () => api.get<{ import_status: string }>(`/v1/task-import-jobs/${job.body.id}/status`, token),
    (s) => ['completed', 'failed'].includes(s.body.import_status),
    180_000,
  );
  if (status.body.import_status !== 'completed') throw new Error(`the import ended ${status.body.import_status}`);
  const listed = await api.get<{ tasks: { id: string }[] }>(
    `/v1/tasks?import_job_id=${job.body.id}&order=asc&per_page=1000`,
    token,
  );
  return { importJobId: job.body.id, taskIds: listed.body.tasks.map((task) => task.id) };
}
