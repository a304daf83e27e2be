/** Where the test suite leaves each request's DynamoDB tally (read by bench/operations.ts and test/proof/). */
import { join } from 'node:path';
import { ROOT } from '#lib/paths';

export const CAPACITY_DIR = join(ROOT, '.test-output', 'capacity');

/** One request as a test file recorded it. */
export interface RequestTally {
  op: string;
  status: number;
  calls: number;
  rcu: number;
  wcu: number;
}
