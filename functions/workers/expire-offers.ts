// The sweep (an EventBridge schedule, every minute): unanswered broadcast pairs past expiry are closed, and mail held
// in the outbox (shared/accounts/outbox.ts) is sent. Each part runs even when the other fails; a failure is thrown
// after both, so that it shows (the next run picks up what is left).
import { deliverOutbox } from '#shared/accounts/outbox';
import { expireOffers } from '#shared/planning/broadcasts';

export const handler = async (): Promise<{ closed: number; mailed: number }> => {
  const [closed, mailed] = await Promise.allSettled([expireOffers(), deliverOutbox()]);
  if (closed.status === 'rejected') throw closed.reason;
  if (mailed.status === 'rejected') throw mailed.reason;
  return { closed: closed.value, mailed: mailed.value };
};
