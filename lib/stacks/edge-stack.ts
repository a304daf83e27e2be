/**
 * The opt-in edge (`-c waf=true`): CloudFront with an AWS WAF web ACL in front of the HTTP API
 * (lib/constructs/edge-firewall.ts). In us-east-1, where CloudFront's web ACLs live; it reads the API's id from
 * DispatchApi across regions (CDK's cross-region references). Absent without the flag.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Construct } from 'constructs';
import { EdgeFirewall } from '#lib/constructs/edge-firewall';
import { stageOf } from '#lib/stage';

/** The region of every web ACL that protects a CloudFront distribution. */
export const EDGE_REGION = 'us-east-1';

export interface EdgeStackProps extends StackProps {
  httpApi: IHttpApi;
  /** The region of the HTTP API. */
  apiRegion: string;
  rateLimitPerIp?: number;
}

export class EdgeStack extends Stack {
  readonly firewall: EdgeFirewall;

  constructor(scope: Construct, id: string, props: EdgeStackProps) {
    super(scope, id, props);
    this.firewall = new EdgeFirewall(this, 'Firewall', {
      apiDomain: `${props.httpApi.apiId}.execute-api.${props.apiRegion}.amazonaws.com`,
      metricPrefix: `dispatch-${stageOf(this).name}`,
      ...(props.rateLimitPerIp ? { rateLimitPerIp: props.rateLimitPerIp } : {}),
    });
    new CfnOutput(this, 'EdgeUrl', {
      description: 'The HTTP API through CloudFront and AWS WAF',
      value: `https://${this.firewall.distribution.distributionDomainName}`,
    });
  }
}
