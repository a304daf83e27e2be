// The CDK app: builds the stacks and applies cdk-nag's AWS Solutions checks and AWS's Guard rules; nothing else.
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildApp, requireDeployContext } from '#lib/app';
import { acknowledgeGuardFindings, guardValidator } from '#lib/guard';

const app = new App();
requireDeployContext(app);
buildApp(app, {
  env: { account: process.env['CDK_DEFAULT_ACCOUNT'], region: process.env['CDK_DEFAULT_REGION'] ?? 'eu-west-1' },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), guardValidator());
acknowledgeGuardFindings(app);
