/**
 * AWS's own Guard rules (the Control Tower proactive controls that @cdklabs/cdk-validator-cfnguard ships together
 * with the cfn-guard binary in its npm tarball, so synth needs no download and works offline) run on every synth
 * besides cdk-nag. Each finding the service accepts is acknowledged here, once for the app, with its reason.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import {
  type App,
  type IPolicyValidationContextBeta1,
  type IPolicyValidationPluginBeta1,
  type PolicyValidationPluginReportBeta1,
  type PolicyViolationBeta1,
  Validations,
} from 'aws-cdk-lib';
import { pause, tryLock, unlock } from '#lib/file-lock';
import { ROOT } from '#lib/paths';

export const GUARD_ACKNOWLEDGEMENTS: Record<string, string> = {
  lambda_inside_vpc_check:
    'The functions reach only AWS APIs (DynamoDB, S3, SQS, KMS, Secrets Manager, SES, SNS, API Gateway), over TLS and authorised by IAM; a VPC would add NAT or interface endpoints and cold-start time and keep nothing out.',
  cloudwatch_log_group_retention_period_check:
    'The rule wants a year or more. Outside prod, function logs are kept a month and access logs three: they carry caller ids and addresses, and are kept no longer than operating a sandbox needs (prod keeps them 1 and 2 years; docs/deploy.md).',
  cloudwatch_log_group_encrypted_check:
    'CloudWatch Logs encrypts every log group at rest; a customer-managed key would add a key policy per log group and keep out no reader that IAM does not.',
  lambda_function_public_access_prohibited_check:
    'Each invoke permission names one service principal (API Gateway, EventBridge, S3) and the source ARN of this API, rule or bucket; none is public.',
  api_gw_v2_authorization_type_configured_check:
    'Public by contract: login, refresh, registration, password reset, token endpoints and the JWKS, plus the $default 404; the WebSocket $connect checks the bearer token itself and the other WebSocket routes run only on connections it admitted.',
  s3_lifecycle_policy_check:
    'Where the rule still flags a bucket: the upload and results buckets have lifecycle rules (uploads 90 days, results 365; docs/deploy.md), and the access-log bucket keeps its logs as long as the stage keeps them.',
  s3_event_notifications_enabled_check:
    'The upload bucket’s ObjectCreated notification is set by CDK’s notifications custom resource, which the rule cannot see; the access-log bucket needs none.',
  s3_bucket_versioning_enabled_check:
    'Objects are written once under new keys (an upload per id, one result per job); versions would keep nothing worth keeping.',
  s3_bucket_object_lock_enabled_check: 'No object here must be immutable by regulation.',
  s3_bucket_default_encryption_kms_check:
    'SSE-S3 encrypts at rest; server access logs cannot be delivered to an SSE-KMS bucket, and SSE-KMS on uploads would tie every presigned URL to the signer’s KMS access.',
  sqs_dlq_check:
    'The queues without a dead-letter queue are the dead-letter queues of the work queue and of the route queue, and the asynchronous invocations’ failure queue.',
  s3_bucket_logging_enabled_check: 'The bucket without access logs is the access-log bucket itself.',
  s3_bucket_acl_prohibited_check:
    'The access-log bucket: S3 server access logging delivers through the log-delivery grant.',
  kms_create_grant_aws_service_check:
    'The secret-box key has CDK’s default key policy: the account may administer it so that IAM policies decide (the IAM proof evaluates those); no role is granted kms:CreateGrant.',
};

/** Where each template's findings are kept, by a hash of the rules' version and the template's bytes. */
const CACHE = join(ROOT, 'node_modules', '.cache', 'cfn-guard');

/**
 * The Guard rules, each template judged once: cfn-guard takes about a minute of CPU for the service's 14 templates
 * (5 to 15 s for each large one), and most synths (the test files', a second `cdk synth`) judge templates already
 * judged. A template's findings depend only on its bytes and the rules, so they are kept under node_modules/.cache
 * by that hash, and only the templates not seen before go to cfn-guard (one run for all of them, as the plugin's
 * own). Two processes judging the same template at once: the first takes a lock, the other waits for its findings
 * (or takes over a lock whose process is gone). The findings are the plugin's, rule for rule: acknowledgements
 * apply to them as before (same plugin name).
 */
export class CachedGuardValidator implements IPolicyValidationPluginBeta1 {
  readonly name: string;
  readonly version?: string;
  readonly ruleIds?: string[];

  constructor(
    private readonly guard = new CfnGuardValidator(),
    private readonly cache = CACHE,
  ) {
    this.name = guard.name;
    this.version = guard.version;
    this.ruleIds = guard.ruleIds;
  }

  validate(context: IPolicyValidationContextBeta1): PolicyValidationPluginReportBeta1 {
    mkdirSync(this.cache, { recursive: true });
    const templates = context.templatePaths.map((path) => ({
      path,
      file: join(this.cache, `${this.keyOf(path)}.json`),
    }));
    const findings = new Map<string, PolicyViolationBeta1[]>();
    for (let waited = 0; ; waited += 500) {
      const open = templates.filter(({ path, file }) => !findings.has(path) && !this.read(file, path, findings));
      if (open.length === 0) break;
      const mine = open.filter(({ file }) => tryLock(`${file}.lock`).taken);
      if (mine.length > 0) {
        try {
          this.judge(context, mine, findings);
        } finally {
          for (const { file } of mine) unlock(`${file}.lock`);
        }
        continue;
      }
      if (waited > 10 * 60_000) throw new Error('gave up waiting for another process to run cfn-guard');
      pause(500);
    }
    const violations = context.templatePaths.flatMap((path) => findings.get(path) ?? []);
    return { success: violations.length === 0, violations, ...(this.version ? { pluginVersion: this.version } : {}) };
  }

  private keyOf(path: string): string {
    return createHash('sha256')
      .update(`${this.name}@${this.version ?? ''}\0`)
      .update(readFileSync(path))
      .digest('hex')
      .slice(0, 32);
  }

  /** The kept findings of `file` for the template at `path` (their paths made its own), if they are kept. */
  private read(file: string, path: string, into: Map<string, PolicyViolationBeta1[]>): boolean {
    if (!existsSync(file)) return false;
    const kept = JSON.parse(readFileSync(file, 'utf8')) as PolicyViolationBeta1[];
    into.set(
      path,
      kept.map((violation) => ({
        ...violation,
        violatingResources: violation.violatingResources.map((resource) => ({ ...resource, templatePath: path })),
      })),
    );
    return true;
  }

  /** cfn-guard over `templates`, once; each template's findings kept and added to `into`. */
  private judge(
    context: IPolicyValidationContextBeta1,
    templates: { path: string; file: string }[],
    into: Map<string, PolicyViolationBeta1[]>,
  ): void {
    const report = this.guard.validate({ ...context, templatePaths: templates.map(({ path }) => path) });
    // A failure with nothing named is no finding to keep: it fails this synth and is judged again next time.
    if (!report.success && report.violations.length === 0) throw new Error('cfn-guard failed and named no finding');
    const paths = new Set(templates.map(({ path }) => path));
    const stray = report.violations.flatMap((v) => v.violatingResources).find((r) => !paths.has(r.templatePath));
    // Never a finding lost to a path written another way.
    if (stray) throw new Error(`cfn-guard named a template it was not given: ${stray.templatePath}`);
    for (const { path, file } of templates) {
      // A finding names resources of one or more templates: each template keeps its own part of it.
      const own = report.violations.flatMap((violation) => {
        // A finding that names no resource is kept by every template it was judged with: never lost.
        if (violation.violatingResources.length === 0) return [violation];
        const resources = violation.violatingResources.filter((resource) => resource.templatePath === path);
        return resources.length > 0 ? [{ ...violation, violatingResources: resources }] : [];
      });
      const writing = `${file}.${process.pid}`;
      writeFileSync(writing, JSON.stringify(own));
      renameSync(writing, file);
      into.set(path, own);
    }
  }
}

export const guardValidator = () => new CachedGuardValidator();

/** Acknowledges the accepted findings for the whole app. */
export function acknowledgeGuardFindings(app: App): void {
  for (const [rule, reason] of Object.entries(GUARD_ACKNOWLEDGEMENTS)) {
    Validations.of(app).acknowledge({ id: `cdk-validator-cfnguard::${rule}`, reason });
  }
}
