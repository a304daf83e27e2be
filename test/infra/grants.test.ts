/**
 * Issue 16.1: each function's role holds only what its declared needs grant. Read from the synthesized templates:
 * read-only functions hold no write action of any kind, nobody holds a table wildcard, and docs/grants.md is what
 * `npm run grants` makes of the declarations today.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import { grantsMarkdown, isReadOnly } from '../../lib/grants-doc.ts';
import { allFunctions } from '../../shared/functions.ts';
import { ACCOUNT } from '../support/aws-calls.ts';
import { asList, dynamodbGrantCount, type FunctionPolicy, functionPolicies } from '../support/policies.ts';

let policies: FunctionPolicy[];

beforeAll(() => {
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong' },
  });
  policies = functionPolicies(app, buildApp(app, { env: { account: ACCOUNT, region: 'eu-west-1' } }));
});

const WRITE_ACTION =
  /^(dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)|s3:PutObject|s3:Delete|sqs:SendMessage|kms:Encrypt|secretsmanager:PutSecretValue|ses:Send|sns:|execute-api:)/;

const actionsOn = (policy: FunctionPolicy) =>
  policy.statements
    .filter((statement) => statement.Effect === 'Allow')
    .flatMap((statement) =>
      asList(statement.Action).flatMap((a) => asList(statement.Resource).map((r) => `${a} ${r}`)),
    );

describe('least privilege per function', () => {
  it('every deployed function has a declaration, and every declaration a function', () => {
    expect(policies.map((p) => p.handler).sort()).toEqual(allFunctions.map((fn) => fn.handler).sort());
  });

  it('read-only functions hold no write action (L2, X9, P3 and T6 among them)', () => {
    const readOnly = new Set(allFunctions.filter(isReadOnly).map((fn) => fn.handler));
    for (const handler of ['locations/read-location', 'accounts/me', 'planning/read', 'tokens/read-partner']) {
      expect(readOnly.has(handler), handler).toBe(true);
    }
    for (const policy of policies.filter((p) => readOnly.has(p.handler))) {
      expect(
        actionsOn(policy).filter((entry) => WRITE_ACTION.test(entry)),
        policy.handler,
      ).toEqual([]);
    }
  });

  it('only POST functions reach the idempotency table, and nobody holds a wildcard on a table or index', () => {
    const posts = new Set(allFunctions.filter((fn) => fn.route?.method === 'POST').map((fn) => fn.handler));
    for (const policy of policies) {
      const entries = actionsOn(policy);
      if (!posts.has(policy.handler)) {
        expect(
          entries.filter((e) => e.includes('table/Idempotency')),
          policy.handler,
        ).toEqual([]);
      }
      expect(
        entries.filter((e) => /dynamodb:\*|table\/[^ ]*\*/.test(e)),
        policy.handler,
      ).toEqual([]);
    }
  });

  it('holds far fewer DynamoDB grants than one read-write grant on everything (issue 16 counted 11 555)', () => {
    const total = policies.reduce((sum, policy) => sum + dynamodbGrantCount(policy), 0);
    // 1 521 at 149 functions (X30 and X31 brought about 40, each its own route's grants, no wildcard: the test
    // above); the bound is 1 600, a seventh of the one grant on everything, and grows only with a reason here.
    expect(total).toBeLessThan(1600);
  });

  it('lists each function’s grants in docs/grants.md, generated and current (npm run grants)', () => {
    expect(readFileSync(join(import.meta.dirname, '../../docs/grants.md'), 'utf8')).toBe(grantsMarkdown());
  });
});
