/** Keys of the requeue sweep's watch list (shared/workers/requeue.ts); small, so that every bundle may carry it. */
import { orgSweepPartition } from '#shared/db/shards';

/**
 * The GSI3 partition of queued and running jobs (imports and plannings), sorted by when the requeue sweep should
 * look at them again: a queued job a while after it was queued, a running one when its lease runs out.
 */
export const ACTIVE_JOBS = 'ACTIVEJOBS';
/**
 * The GSI3 partition key of a job of organisation `orgId` (`ACTIVEJOBS#<org>`: one list an organisation,
 * shared/db/shards.ts `orgSweepPartition`). Every job has one: a planning's and a route build's are its planning's
 * organisation's, an import job's the organisation it imports for (I4a names it, I4b and the upload take the caller's).
 */
export const activeJobsPartition = (orgId: string) => orgSweepPartition(ACTIVE_JOBS, orgId);
const requeueAfterMs = () => Number(process.env['JOB_REQUEUE_AFTER_MS'] ?? 120_000);
/** The sort key of a job the sweep should look at `requeueAfterMs` after `fromMs`. */
export const requeueAt = (fromMs: number) => new Date(fromMs + requeueAfterMs()).toISOString();
/** The sort key of a job whose lease runs until `leaseMs`. */
export const leaseKey = (leaseMs: number) => new Date(leaseMs).toISOString();
