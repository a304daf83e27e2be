/**
 * lib/guard.ts's CachedGuardValidator: cfn-guard judges each template once. Its findings are the plugin's own (the
 * real cfn-guard binary on real templates), a template judged before is answered from the cache without running
 * cfn-guard, a changed template is judged again, and a finding names the template it was asked about.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import type { IPolicyValidationContextBeta1 } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { CachedGuardValidator } from '../../lib/guard.ts';

/** A queue without a dead-letter queue: Guard's sqs_dlq_check flags it. */
const QUEUE = { Resources: { Work: { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 30 } } } };
/** A topic: not a queue, so not that rule's. */
const TOPIC = { Resources: { Told: { Type: 'AWS::SNS::Topic', Properties: { KmsMasterKeyId: 'alias/aws/sns' } } } };

function templates(dir: string, files: Record<string, unknown>): string[] {
  mkdirSync(dir, { recursive: true });
  return Object.entries(files).map(([name, template]) => {
    const path = join(dir, `${name}.template.json`);
    writeFileSync(path, JSON.stringify(template));
    return path;
  });
}

/** The real plugin, counting the templates it is given. */
function countingGuard() {
  const guard = new CfnGuardValidator();
  const judged: string[] = [];
  const validate = guard.validate.bind(guard);
  guard.validate = (context: IPolicyValidationContextBeta1) => {
    judged.push(...context.templatePaths);
    return validate(context);
  };
  return { guard, judged };
}

const contextOf = (templatePaths: string[]) => ({ templatePaths }) as unknown as IPolicyValidationContextBeta1;
const ruleNames = (report: { violations: { ruleName: string }[] }) => report.violations.map((v) => v.ruleName).sort();

describe('CachedGuardValidator', () => {
  it('finds what the plugin finds, and judges a template seen before without running cfn-guard', () => {
    const root = mkdtempSync(join(tmpdir(), 'guard-cache-'));
    const cache = join(root, 'cache');
    const paths = templates(join(root, 'first'), { Queue: QUEUE, Topic: TOPIC });
    const plain = new CfnGuardValidator().validate(contextOf(paths));
    expect(plain.success).toBe(false);
    expect(ruleNames(plain)).toContain('sqs_dlq_check');

    const { guard, judged } = countingGuard();
    const cached = new CachedGuardValidator(guard, cache);
    expect(cached.name).toBe('cdk-validator-cfnguard');
    const first = cached.validate(contextOf(paths));
    expect(first.success).toBe(false);
    expect(ruleNames(first)).toEqual(ruleNames(plain));
    expect(judged).toEqual(paths);

    // The same bytes elsewhere (another synth's output folder): answered from the cache, named by their new path.
    const again = templates(join(root, 'second'), { Queue: QUEUE, Topic: TOPIC });
    const second = new CachedGuardValidator(guard, cache).validate(contextOf(again));
    expect(judged).toEqual(paths);
    expect(ruleNames(second)).toEqual(ruleNames(plain));
    const resources = second.violations.flatMap((v) => v.violatingResources);
    expect(resources.length).toBeGreaterThan(0);
    for (const resource of resources) expect(again).toContain(resource.templatePath);
    expect(second.violations.find((v) => v.ruleName === 'sqs_dlq_check')?.violatingResources).toEqual([
      expect.objectContaining({ resourceLogicalId: 'Work', templatePath: again[0] }),
    ]);

    // A template changed: only it goes to cfn-guard; with a dead-letter queue the rule no longer flags it.
    const withDeadLetters = {
      Resources: {
        Dead: { Type: 'AWS::SQS::Queue', Properties: { MessageRetentionPeriod: 1_209_600 } },
        Work: {
          Type: 'AWS::SQS::Queue',
          Properties: { RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['Dead', 'Arn'] }, maxReceiveCount: 3 } },
        },
      },
    };
    const changed = templates(join(root, 'third'), { Queue: withDeadLetters, Topic: TOPIC });
    const third = new CachedGuardValidator(guard, cache).validate(contextOf(changed));
    expect(judged).toEqual([...paths, changed[0]]);
    const plainThird = new CfnGuardValidator().validate(contextOf(changed));
    expect(ruleNames(third)).toEqual(ruleNames(plainThird));
    expect(
      third.violations.filter((v) => v.ruleName === 'sqs_dlq_check').flatMap((v) => v.violatingResources),
    ).not.toContainEqual(expect.objectContaining({ resourceLogicalId: 'Work' }));
  }, 60_000);

  it('keeps nothing of a failure that names no finding: the synth fails, and the next one judges again', () => {
    const root = mkdtempSync(join(tmpdir(), 'guard-cache-'));
    const paths = templates(join(root, 'first'), { Queue: QUEUE });
    let calls = 0;
    const guard = Object.assign(new CfnGuardValidator(), {
      validate: () => {
        calls++;
        return { success: false, violations: [] };
      },
    });
    const cached = new CachedGuardValidator(guard, join(root, 'cache'));
    expect(() => cached.validate(contextOf(paths))).toThrow(/named no finding/);
    expect(() => cached.validate(contextOf(paths))).toThrow(/named no finding/);
    expect(calls).toBe(2);
  });

  it('keeps a finding that names no resource, for every template it was judged with', () => {
    const root = mkdtempSync(join(tmpdir(), 'guard-cache-'));
    const paths = templates(join(root, 'first'), { Queue: QUEUE, Topic: TOPIC });
    const finding = {
      ruleName: 'whole_template_rule',
      description: 'a rule about the template',
      violatingResources: [],
    };
    const guard = Object.assign(new CfnGuardValidator(), {
      validate: () => ({ success: false, violations: [finding] }),
    });
    const report = new CachedGuardValidator(guard, join(root, 'cache')).validate(contextOf(paths));
    expect(report.success).toBe(false);
    expect(report.violations).toEqual([finding, finding]);
    // Judged again from the cache: still there.
    const again = new CachedGuardValidator(guard, join(root, 'cache')).validate(contextOf(paths));
    expect(again.success).toBe(false);
    expect(again.violations.map((v) => v.ruleName)).toEqual(['whole_template_rule', 'whole_template_rule']);
  });
});
