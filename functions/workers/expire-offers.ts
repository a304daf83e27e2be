// The expiry sweep (an EventBridge schedule, every minute): unanswered broadcast pairs past expiry are closed.
import { expireOffers } from '#shared/planning/broadcasts';

export const handler = async (): Promise<{ closed: number }> => ({ closed: await expireOffers() });
