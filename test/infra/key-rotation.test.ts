/**
 * Issue 25.6 on the synthesized templates: the signing-key secret has a rotation schedule whose function is the
 * service's rotation function, which Secrets Manager alone may invoke (for that secret), and whose role reaches only
 * that secret, with only the rotation's four actions (plus its logs).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import { DispatchFunction } from '../../lib/constructs/dispatch-function.ts';
import { ROTATION_INTERVAL_DAYS } from '../../shared/auth/key-rotation.ts';

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };

let app: App;
let built: ReturnType<typeof buildApp>;

const resourcesOf = (stack: Stack) =>
  Object.entries(Template.fromStack(stack).toJSON()['Resources'] as Record<string, Resource>);

for (const stage of ['sandbox', 'prod']) {
  describe(`signing-key rotation (issue 25.6), stage ${stage}`, () => {
    beforeAll(() => {
      app = new App({
        outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
        context: {
          'aws:cdk:bundling-stacks': [],
          '@aws-cdk/core:defaultCrossStackReferences': 'strong',
          stage,
        },
      });
      built = buildApp(app, { env: { account: '123456789012', region: 'eu-west-1' } });
      // Synthesizing is the slow part: once, here.
      Template.fromStack(built.workers);
    }, 300_000);

    it('rotates the signing-key secret on a schedule with the rotation function, not at deploy time', () => {
      const rotationFn = app.node
        .findAll()
        .find(
          (c): c is DispatchFunction => c instanceof DispatchFunction && c.handlerPath === 'auth/rotate-signing-keys',
        );
      expect(rotationFn).toBeDefined();
      const stack = Stack.of(rotationFn!);
      const fnId = stack.getLogicalId(rotationFn!.node.defaultChild as never);
      const resources = resourcesOf(stack);
      const schedules = resources.filter(([, r]) => r.Type === 'AWS::SecretsManager::RotationSchedule');
      expect(schedules).toHaveLength(1);
      const [, schedule] = schedules[0]!;
      expect(schedule.Properties).toMatchObject({
        RotationLambdaARN: { 'Fn::GetAtt': [fnId, 'Arn'] },
        RotationRules: { AutomaticallyAfterDays: ROTATION_INTERVAL_DAYS },
        RotateImmediatelyOnUpdate: false,
      });
      // The secret it rotates is the data stack's signing-key secret (imported across stacks).
      expect(JSON.stringify(schedule.Properties['SecretId'])).toMatch(/SigningKeys/);
      // Secrets Manager may invoke it, for that secret in this account only; the schedule waits for the permission.
      const permissions = resources.filter(
        ([, r]) => r.Type === 'AWS::Lambda::Permission' && r.Properties['Principal'] === 'secretsmanager.amazonaws.com',
      );
      expect(permissions).toHaveLength(1);
      const [permissionId, permission] = permissions[0]!;
      expect(permission.Properties).toMatchObject({
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': [fnId, 'Arn'] },
        SourceAccount: '123456789012',
      });
      expect(JSON.stringify(permission.Properties['SourceArn'])).toMatch(/SigningKeys/);
      expect(schedule.DependsOn).toContain(permissionId);
    });

    it('lets the rotation function touch the signing-key secret only, with the four rotation actions', () => {
      const stack = built.workers;
      const policies = resourcesOf(stack).filter(
        ([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith('RotateSigningKeys'),
      );
      expect(policies).toHaveLength(1);
      const statements = (policies[0]![1].Properties['PolicyDocument'] as { Statement: Record<string, unknown>[] })
        .Statement;
      const actions = statements.flatMap((s) => [s['Action']].flat() as string[]).sort();
      expect(actions.filter((a) => a.startsWith('secretsmanager:'))).toEqual([
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
        'secretsmanager:PutSecretValue',
        'secretsmanager:UpdateSecretVersionStage',
      ]);
      for (const statement of statements.filter((s) => String(s['Action']).includes('secretsmanager'))) {
        expect(JSON.stringify(statement['Resource'])).toMatch(/SigningKeys/);
      }
    });
  });
}
