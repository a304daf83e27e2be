// The sweep (an EventBridge schedule, every minute): unanswered broadcast pairs past expiry are closed, mail held in
// the outbox (shared/accounts/outbox.ts) is sent, and jobs whose work message was lost get a new one
// (shared/workers/requeue.ts). Each part runs even when another fails; a failure is thrown after all of them, so that
// it shows (the next run picks up what is left).
import { deliverOutbox } from '#shared/accounts/outbox';
import { expireOffers } from '#shared/planning/broadcasts';
import { requeueStaleJobs } from '#shared/workers/requeue';

export const handler = async (): Promise<{ closed: number; mailed: number; requeued: number }> => {
  const [closed, mailed, requeued] = await Promise.allSettled([expireOffers(), deliverOutbox(), requeueStaleJobs()]);
  for (const part of [closed, mailed, requeued]) if (part.status === 'rejected') throw part.reason;
  return {
    closed: (closed as PromiseFulfilledResult<number>).value,
    mailed: (mailed as PromiseFulfilledResult<number>).value,
    requeued: (requeued as PromiseFulfilledResult<number>).value,
  };
};
