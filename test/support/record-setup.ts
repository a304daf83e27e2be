/**
 * Every test file records the AWS calls the functions make (test/support/aws-calls.ts) into .test-output/aws-calls/,
 * one file per test file; the IAM proof (test/proof/iam.test.ts) runs after all of them and reads the lot.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { RECORD_DIR, recordAwsCalls } from './aws-calls.ts';

const calls = recordAwsCalls();
afterAll(() => {
  const made = calls.filter((call) => call.fn !== '?');
  if (made.length === 0) return;
  mkdirSync(RECORD_DIR, { recursive: true });
  writeFileSync(
    join(RECORD_DIR, `${randomBytes(6).toString('hex')}.jsonl`),
    `${made.map((call) => JSON.stringify(call)).join('\n')}\n`,
  );
});
