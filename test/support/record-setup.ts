/**
 * Every test file records the AWS calls the functions make (test/support/aws-calls.ts) into .test-output/aws-calls/,
 * and the DynamoDB tally of every request they serve into .test-output/capacity/, one file per test file; the proofs
 * (test/proof/) run after all of them and read the lot, and `npm run bench` prints the tallies by operation.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { CAPACITY_DIR, type RequestTally } from '../../bench/tallies.ts';
import { tallyObservers } from '../../shared/db/capacity.ts';
import { RECORD_DIR, recordAwsCalls } from './aws-calls.ts';

const calls = recordAwsCalls();
const requests: RequestTally[] = [];
tallyObservers.add((tally, op, status) => {
  if (status !== undefined) requests.push({ op, status, ...tally });
});
afterAll(() => {
  if (requests.length > 0) {
    mkdirSync(CAPACITY_DIR, { recursive: true });
    writeFileSync(
      join(CAPACITY_DIR, `${randomBytes(6).toString('hex')}.jsonl`),
      `${requests.map((request) => JSON.stringify(request)).join('\n')}\n`,
    );
  }
  const made = calls.filter((call) => call.fn !== '?');
  if (made.length === 0) return;
  mkdirSync(RECORD_DIR, { recursive: true });
  writeFileSync(
    join(RECORD_DIR, `${randomBytes(6).toString('hex')}.jsonl`),
    `${made.map((call) => JSON.stringify(call)).join('\n')}\n`,
  );
});
