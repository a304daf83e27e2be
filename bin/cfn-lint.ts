/**
 * AWS's CloudFormation linter over the service's templates (issue 25.8): synthesizes the app (without bundling:
 * cfn-lint reads templates, not code; the same stacks `cdk deploy` would create) into a temporary directory, or reads
 * for the default stage and for prod, or the cloud assembly named as the first argument (`npm run lint:cfn -- cdk.out`), and runs `cfn-lint` over every
 * template. Errors fail, and so does every warning except the two CDK itself makes: W3005 (a DependsOn that a
 * reference already implies) and W3045 (a bucket policy's access-control setting CDK writes for log delivery).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { App } from 'aws-cdk-lib';
import { buildApp } from '#lib/app';
import { DEFAULT_STAGE, PROD_STAGE } from '#lib/stage';

/** Warnings CDK's own constructs make; each stays until aws-cdk-lib writes those resources differently. */
export const ACCEPTED_WARNINGS = ['W3005', 'W3045'];

const version = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
if (version.error || version.status !== 0) {
  console.error('cfn-lint is not installed (pip install cfn-lint): it is required to check the templates.');
  process.exit(1);
}

/**
 * Without an assembly given, both kinds of stage are linted: the default (sandbox) and prod (issue 25.4), and the
 * sandbox again with the WAF option (`-c waf=true`: CloudFront and AWS WAF in DispatchEdge, docs/throttling.md).
 */
const ASSEMBLIES: readonly { name: string; stage: string; waf?: 'true' }[] = [
  { name: DEFAULT_STAGE, stage: DEFAULT_STAGE },
  { name: PROD_STAGE, stage: PROD_STAGE },
  { name: `${DEFAULT_STAGE}-waf`, stage: DEFAULT_STAGE, waf: 'true' },
];
let outdirs = process.argv[2] ? [resolve(process.argv[2])] : [];
if (outdirs.length === 0) {
  const root = mkdtempSync(join(tmpdir(), 'dispatch-cfn-lint-'));
  outdirs = ASSEMBLIES.map(({ name, stage, waf }) => {
    const outdir = join(root, name);
    const app = new App({
      outdir,
      context: {
        'aws:cdk:bundling-stacks': [],
        '@aws-cdk/core:defaultCrossStackReferences': 'strong',
        mailFrom: 'no-reply@mail.example.com',
        alarmEmail: 'oncall@mail.example.com',
        stage,
        ...(waf ? { waf } : {}),
      },
    });
    buildApp(app, { env: { account: '123456789012', region: process.env['CDK_DEFAULT_REGION'] ?? 'eu-west-1' } });
    app.synth();
    return outdir;
  });
}
const outdir = outdirs.join(', ');
const templates = outdirs.flatMap((dir) =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.template.json'))
    .map((name) => join(dir, name)),
);
if (templates.length === 0) {
  console.error(`no templates in ${outdir}`);
  process.exit(1);
}
// The same bytes are linted once: the WAF assembly repeats all but two of the default's templates (30 s of cfn-lint).
const byContent = new Map<string, string>();
for (const template of templates) {
  const hash = createHash('sha256').update(readFileSync(template)).digest('hex');
  if (!byContent.has(hash)) byContent.set(hash, template);
}
const unique = [...byContent.values()];
console.log(
  `${version.stdout.trim()} over ${templates.length} templates in ${outdir} (${unique.length} different, each linted once)`,
);
const lint = spawnSync(
  'cfn-lint',
  [
    '--format',
    'parseable',
    '--non-zero-exit-code',
    'warning',
    '--ignore-checks',
    ...ACCEPTED_WARNINGS,
    '--',
    ...unique,
  ],
  { encoding: 'utf8' },
);
process.stdout.write(lint.stdout);
process.stderr.write(lint.stderr);
if (lint.status !== 0) {
  console.error(`cfn-lint found errors or warnings (exit ${lint.status}; ${ACCEPTED_WARNINGS.join(', ')} accepted)`);
  process.exit(1);
}
console.log(`cfn-lint: no error, no warning (besides ${ACCEPTED_WARNINGS.join(', ')})`);
