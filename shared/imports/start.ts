/**
 * I6: queues an import job. Kept apart from the runner (shared/imports/runner.ts), so that the I6 functions bundle
 * none of the CSV parsing the worker does: it kept their bundles over the 400 KB budget.
 */
import type { Caller } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { moveStatus, toJobView, visibleJob } from '#shared/imports/jobs';
import { queue } from '#shared/ports/queue';

export async function startJob(caller: Caller, id: string, dryRun: boolean) {
  const job = await visibleJob(caller, id);
  const started = await moveStatus(job, 'new', 'queued', {
    dry_run: dryRun,
    last_executed_at_server_time: clock.nowIso(),
    last_executed_at_client_time_utc: job.upload_record.client_time_utc,
    last_executed_at_client_timezone: job.upload_record.client_timezone,
  });
  await queue().enqueue({ kind: 'import', job_id: job.id }, 0);
  return toJobView(started);
}
