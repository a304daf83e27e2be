// `npm run smoke -- --stage sandbox --email <adminEmail>`: the deployed stage's API and SysAdmin password are looked up
// in the deploy's region (AWS_REGION, as for `npm run deploy`); or `--url https://… [--email …] [--password …]`.
import { parseArgs } from 'node:util';
import { deployedStage, profileRegion, StageNotDeployed } from '#lib/deploy-aws';
import { resolveRegion } from '#lib/deploy-checks';
import { runSmoke } from '#lib/smoke';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    stage: { type: 'string' },
    email: { type: 'string' },
    password: { type: 'string' },
  },
});
if (!values.url && !values.stage) {
  console.error('usage: npm run smoke -- --stage <stage> --email <adminEmail>  (or --url https://… [--password …])');
  process.exit(2);
}
let { url, password } = values;
if (!url && values.stage) {
  const region = resolveRegion({
    AWS_REGION: process.env['AWS_REGION'],
    AWS_DEFAULT_REGION: process.env['AWS_DEFAULT_REGION'],
    CDK_DEFAULT_REGION: process.env['CDK_DEFAULT_REGION'],
    profile: await profileRegion(),
  });
  if (!region.ok) {
    console.error(region.problem);
    process.exit(2);
  }
  const deployed = await deployedStage(values.stage, region.value).catch((error: unknown) => {
    if (!(error instanceof StageNotDeployed)) throw error;
    console.error(error.message);
    process.exit(2);
  });
  url = deployed.url;
  password ??= deployed.password;
}
const steps = await runSmoke({
  url: url!,
  email: values.email ?? process.env['DISPATCH_ADMIN_EMAIL'] ?? 'admin@dispatch.local',
  password: password ?? process.env['DISPATCH_ADMIN_PASSWORD'] ?? 'admin-password-change-me',
});
process.exit(steps.every((step) => step.ok) ? 0 : 1);
