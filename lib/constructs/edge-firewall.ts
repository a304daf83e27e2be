/**
 * The opt-in edge of the HTTP API (`-c waf=true`, issue 33 item 10): a CloudFront distribution in front of the API
 * with an AWS WAF web ACL, since WAF cannot be attached to an HTTP API itself. The ACL blocks an IP address above its
 * rate and runs AWS's managed common rules and known-bad-inputs rules. Caching is off: every request goes to the API
 * with its headers and query, `Authorization` in the (one-second) cache key so that CloudFront forwards it on GETs.
 * A web ACL for CloudFront lives in us-east-1, hence the stack that holds this (lib/stacks/edge-stack.ts) does too.
 * What it does and does not do: docs/throttling.md.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CacheHeaderBehavior,
  CachePolicy,
  CacheQueryStringBehavior,
  Distribution,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  PriceClass,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

/** Requests one IP address may make in any five minutes before WAF answers 429 (10 a second on average). */
export const WAF_RATE_LIMIT_PER_IP = 3000;

/** AWS managed rule groups the ACL runs, in this order after the rate rule. */
export const WAF_MANAGED_RULES = ['AWSManagedRulesCommonRuleSet', 'AWSManagedRulesKnownBadInputsRuleSet'] as const;

/**
 * Rules of the common set only counted, not enforced: `SizeRestrictions_BODY` blocks bodies over 8 KB, and the API
 * takes larger ones by contract (I3's multipart upload up to 6 MiB, P5's 90 runsheets, JSON up to 1 MiB).
 */
export const WAF_COUNTED_RULES = ['SizeRestrictions_BODY'] as const;

export interface EdgeFirewallProps {
  /** The HTTP API's host name (`<api id>.execute-api.<region>.amazonaws.com`). */
  apiDomain: string;
  /** Name prefix of the ACL's metrics (carries the stage). */
  metricPrefix: string;
  rateLimitPerIp?: number;
}

export class EdgeFirewall extends Construct {
  readonly webAcl: CfnWebACL;
  readonly distribution: Distribution;

  constructor(scope: Construct, id: string, props: EdgeFirewallProps) {
    super(scope, id);
    const visibility = (name: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName: `${props.metricPrefix}-${name}`,
    });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('acl'),
      customResponseBodies: {
        rateLimited: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({
            type: 'about:blank',
            title: 'Too many requests',
            status: 429,
            code: 'rate_limited',
            detail: 'Too many requests from this address: wait a few minutes.',
          }),
        },
      },
      rules: [
        {
          name: 'RatePerIp',
          priority: 0,
          action: { block: { customResponse: { responseCode: 429, customResponseBodyKey: 'rateLimited' } } },
          statement: {
            rateBasedStatement: {
              limit: props.rateLimitPerIp ?? WAF_RATE_LIMIT_PER_IP,
              aggregateKeyType: 'IP',
              evaluationWindowSec: 300,
            },
          },
          visibilityConfig: visibility('rate-per-ip'),
        },
        ...WAF_MANAGED_RULES.map((name, index) => ({
          name,
          priority: index + 1,
          overrideAction: { none: {} },
          statement: {
            managedRuleGroupStatement: {
              vendorName: 'AWS',
              name,
              ...(name === 'AWSManagedRulesCommonRuleSet'
                ? { ruleActionOverrides: WAF_COUNTED_RULES.map((rule) => ({ name: rule, actionToUse: { count: {} } })) }
                : {}),
            },
          },
          visibilityConfig: visibility(name),
        })),
      ],
    });

    // No caching, yet `Authorization` must be in the cache key for CloudFront to forward it on GET and HEAD; a key
    // with a header needs a maximum TTL above zero. The API sends no Cache-Control, so the default (0) applies.
    const passThrough = new CachePolicy(this, 'PassThrough', {
      comment: 'Dispatch API: no caching; Authorization forwarded',
      defaultTtl: Duration.seconds(0),
      minTtl: Duration.seconds(0),
      maxTtl: Duration.seconds(1),
      headerBehavior: CacheHeaderBehavior.allowList('Authorization'),
      queryStringBehavior: CacheQueryStringBehavior.all(),
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Dispatch HTTP API behind AWS WAF',
      webAclId: this.webAcl.attrArn,
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      defaultBehavior: {
        origin: new HttpOrigin(props.apiDomain, {
          protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [OriginSslPolicy.TLS_V1_2],
        }),
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: passThrough,
        // API Gateway routes by its own host name: every viewer header but Host.
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
    });
    for (const [id, reason] of [
      ['CFR1', 'The API serves drivers and partners wherever they are: no geographic restriction.'],
      [
        'CFR3',
        'Every request that passes is logged by the API stage’s access log (DispatchGateway); WAF keeps sampled requests and metrics of the blocked ones.',
      ],
      [
        'CFR4',
        'The distribution uses CloudFront’s default certificate (no custom domain in this option), which cannot pin the viewer TLS version; the origin leg is TLS 1.2.',
      ],
    ] as const) {
      Validations.of(this.distribution).acknowledge({ id: `AwsSolutions::AwsSolutions-${id}`, reason });
    }
  }
}
