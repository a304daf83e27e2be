/**
 * AWS's own Guard rules (the Control Tower proactive controls that @cdklabs/cdk-validator-cfnguard ships together
 * with the cfn-guard binary in its npm tarball, so synth needs no download and works offline) run on every synth
 * besides cdk-nag. Each finding the service accepts is acknowledged here, once for the app, with its reason.
 */
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { type App, Validations } from 'aws-cdk-lib';

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

export const guardValidator = () => new CfnGuardValidator();

/** Acknowledges the accepted findings for the whole app. */
export function acknowledgeGuardFindings(app: App): void {
  for (const [rule, reason] of Object.entries(GUARD_ACKNOWLEDGEMENTS)) {
    Validations.of(app).acknowledge({ id: `cdk-validator-cfnguard::${rule}`, reason });
  }
}
