// The sweep (an EventBridge schedule, every minute): unanswered broadcast pairs past expiry are closed, runsheets
// whose offers all closed get their next wave or their unassigned reason (shared/planning/waves.ts), mail held in
// the outbox (shared/accounts/outbox.ts) is sent, and jobs whose work message was lost get a new one
// (shared/workers/requeue.ts), and once a minute the runsheets under way whose driver stood still are checked for
// stops at risk (shared/planning/late-risk.ts). Each part runs even when another fails; a failure is thrown after all of them, so that
// it shows (the next run picks up what is left). The expiry, wave and requeue lists are one an organisation: the run
// reads the organisations' listing once, at its start, and the three sweeps share it (a new organisation is swept from
// the next run on).
import { deliverOutbox } from '#shared/accounts/outbox';
import { withCapacity } from '#shared/db/capacity';
import { sweptOrganisations } from '#shared/db/shards';
import { sweepLateRisks } from '#shared/planning/late-risk';
import { expireOffers } from '#shared/planning/offer-expiry';
import { sendDueWaves } from '#shared/planning/waves';
import { requeueStaleJobs } from '#shared/workers/requeue';

export const handler = async (): Promise<{
  closed: number;
  mailed: number;
  requeued: number;
  waves: number;
  unassigned: number;
  risks: number;
}> => {
  // The waves come after the expiry: a runsheet whose last offer expired in this run gets its next wave in it too.
  // Each part's DynamoDB units are tallied under its own label, as a request's are (observers, e.g. the benches).
  const orgs = sweptOrganisations();
  const offers = (async () => {
    const closed = await withCapacity(async () => expireOffers(await orgs), 'sweep:expiry').then(
      ({ result }) => result,
      (error: unknown) => error as Error,
    );
    const { result: waves } = await withCapacity(async () => sendDueWaves(await orgs), 'sweep:waves');
    if (closed instanceof Error) throw closed;
    return { closed, ...waves };
  })();
  const risks = withCapacity(async () => sweepLateRisks(await orgs), 'sweep:late-risk').then(({ result }) => result);
  const [dispatched, mailed, requeued, risked] = await Promise.allSettled([
    offers,
    deliverOutbox(),
    orgs.then(requeueStaleJobs),
    risks,
  ]);
  for (const part of [dispatched, mailed, requeued, risked]) if (part.status === 'rejected') throw part.reason;
  return {
    ...(dispatched as PromiseFulfilledResult<{ closed: number; waves: number; unassigned: number }>).value,
    mailed: (mailed as PromiseFulfilledResult<number>).value,
    requeued: (requeued as PromiseFulfilledResult<number>).value,
    risks: (risked as PromiseFulfilledResult<number>).value,
  };
};
