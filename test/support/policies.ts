/**
 * Each function's IAM policy as synthesized: its role's inline policies and the customer-managed policies attached
 * to it, read from the templates, with references resolved to the placeholder ARNs the call recorder uses
 * (test/support/aws-calls.ts). AWS-managed policies (AWSLambdaBasicExecutionRole: the function's own logs) are left
 * out: the service makes no logs call of its own.
 */
import { type App, type CfnElement, type CfnResource, Stack } from 'aws-cdk-lib';
import type { buildApp } from '../../lib/app.ts';
import { DispatchFunction } from '../../lib/constructs/dispatch-function.ts';
import { ACCOUNT, PLACEHOLDER, REGION } from './aws-calls.ts';

type Template = {
  Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
};

export interface PolicyStatementJson {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: string | string[];
}

export interface FunctionPolicy {
  handler: string;
  stack: string;
  statements: PolicyStatementJson[];
}

/** Resource policies the evaluator needs besides the role's: KMS answers only when the key policy lets IAM decide. */
export const resourcePolicies = new Map<string, unknown>();

export function functionPolicies(app: App, built: ReturnType<typeof buildApp>): FunctionPolicy[] {
  const stacks = app.node.children.filter((child): child is Stack => child instanceof Stack);
  const templates = new Map(
    stacks.map((stack) => [stack.stackName, app.synth().getStackByName(stack.stackName).template as Template]),
  );
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    Stack.of(construct as never).getLogicalId(construct.node.defaultChild as CfnElement);

  // Placeholders by stack and logical id: what Ref and Fn::GetAtt … Arn resolve to.
  const refs = new Map<string, string>();
  const arns = new Map<string, string>();
  const data = built.data.stackName;
  const tableEntries = [
    ['Main', built.data.mainTable],
    ['Locations', built.data.locationsTable],
    ['Connections', built.data.connectionsTable],
    ['Idempotency', built.data.idempotencyTable],
  ] as const;
  for (const [id, table] of tableEntries) {
    refs.set(`${data}/${logicalId(table)}`, id);
    arns.set(`${data}/${logicalId(table)}`, PLACEHOLDER.table(id));
  }
  refs.set(`${data}/${logicalId(built.data.uploadBucket)}`, 'UploadBucket');
  arns.set(`${data}/${logicalId(built.data.uploadBucket)}`, PLACEHOLDER.bucket);
  refs.set(`${data}/${logicalId(built.data.workQueue)}`, `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/WorkQueue`);
  arns.set(`${data}/${logicalId(built.data.workQueue)}`, PLACEHOLDER.workQueue);
  refs.set(`${data}/${logicalId(built.data.routeQueue)}`, `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/RouteQueue`);
  arns.set(`${data}/${logicalId(built.data.routeQueue)}`, PLACEHOLDER.routeQueue);
  refs.set(`${data}/${logicalId(built.data.secretBoxKey)}`, 'SecretBoxKey');
  arns.set(`${data}/${logicalId(built.data.secretBoxKey)}`, PLACEHOLDER.secretBoxKey);
  refs.set(`${data}/${logicalId(built.data.signingKeySecret)}`, PLACEHOLDER.signingKeySecret);
  refs.set(`${data}/${logicalId(built.data.pageTokenSecret)}`, PLACEHOLDER.pageTokenSecret);
  refs.set(`${data}/${logicalId(built.data.adminPasswordSecret)}`, PLACEHOLDER.adminPasswordSecret);
  const webSocketApi = built.realtime.node.findChild('WebSocketApi') as unknown as { node: { defaultChild?: unknown } };
  refs.set(`${built.realtime.stackName}/${logicalId(webSocketApi)}`, 'WebSocketApi');

  const exports = new Map<string, { stack: string; value: unknown }>();
  for (const [stack, template] of templates) {
    for (const output of Object.values(template.Outputs ?? {})) {
      if (typeof output.Export?.Name === 'string') exports.set(output.Export.Name, { stack, value: output.Value });
    }
  }

  const resolve = (value: unknown, stack: string): unknown => {
    if (typeof value === 'string' || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((item) => resolve(item, stack));
    const object = value as Record<string, unknown>;
    if ('Ref' in object) {
      const name = String(object['Ref']);
      const pseudo: Record<string, string> = {
        'AWS::Partition': 'aws',
        'AWS::Region': REGION,
        'AWS::AccountId': ACCOUNT,
        'AWS::URLSuffix': 'amazonaws.com',
      };
      return pseudo[name] ?? refs.get(`${stack}/${name}`) ?? `unresolved:Ref:${stack}/${name}`;
    }
    if ('Fn::GetAtt' in object) {
      const [name, attribute] = object['Fn::GetAtt'] as [string, string];
      return (attribute === 'Arn' && arns.get(`${stack}/${name}`)) || `unresolved:GetAtt:${stack}/${name}.${attribute}`;
    }
    if ('Fn::ImportValue' in object) {
      const found = exports.get(String(resolve(object['Fn::ImportValue'], stack)));
      return found ? resolve(found.value, found.stack) : 'unresolved:ImportValue';
    }
    if ('Fn::Join' in object) {
      const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
      return parts.map((part) => String(resolve(part, stack))).join(separator);
    }
    if ('Fn::Split' in object) {
      const [separator, source] = object['Fn::Split'] as [string, unknown];
      return String(resolve(source, stack)).split(separator);
    }
    if ('Fn::Select' in object) {
      const [index, list] = object['Fn::Select'] as [number, unknown];
      return (resolve(list, stack) as unknown[])[Number(index)];
    }
    return Object.fromEntries(Object.entries(object).map(([key, item]) => [key, resolve(item, stack)]));
  };

  const keyResource = templates.get(data)!.Resources![logicalId(built.data.secretBoxKey)]!;
  resourcePolicies.set(PLACEHOLDER.secretBoxKey, resolve(keyResource.Properties!['KeyPolicy'], data));

  const managedPolicies = new Map<string, PolicyStatementJson[]>();
  for (const [stack, template] of templates) {
    for (const [id, resource] of Object.entries(template.Resources ?? {})) {
      if (resource.Type !== 'AWS::IAM::ManagedPolicy') continue;
      const document = resolve(resource.Properties!['PolicyDocument'], stack) as { Statement: PolicyStatementJson[] };
      managedPolicies.set(`managed:${stack}/${id}`, document.Statement);
      refs.set(`${stack}/${id}`, `managed:${stack}/${id}`);
    }
  }

  const functions = app.node
    .findAll()
    .filter((construct): construct is DispatchFunction => construct instanceof DispatchFunction);
  return functions.map((fn) => {
    const stack = Stack.of(fn).stackName;
    const template = templates.get(stack)!;
    const role = logicalId(fn.role as unknown as { node: { defaultChild?: unknown } });
    const statements: PolicyStatementJson[] = [];
    for (const resource of Object.values(template.Resources ?? {})) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      const roles = resource.Properties!['Roles'] as { Ref: string }[];
      if (!roles.some((r) => r.Ref === role)) continue;
      statements.push(
        ...(resolve(resource.Properties!['PolicyDocument'], stack) as { Statement: PolicyStatementJson[] }).Statement,
      );
    }
    const roleResource = template.Resources![role]!;
    for (const attached of (roleResource.Properties!['ManagedPolicyArns'] as unknown[]) ?? []) {
      const name = resolve(attached, stack);
      if (typeof name === 'string' && managedPolicies.has(name)) statements.push(...managedPolicies.get(name)!);
    }
    return { handler: fn.handlerPath, stack, statements };
  });
}

export const asList = (value: string | string[]) => (Array.isArray(value) ? value : [value]);

/** DynamoDB action × resource pairs an allow statement grants (the figure issue 16 counts). */
export const dynamodbGrantCount = (policy: FunctionPolicy) =>
  policy.statements
    .filter((statement) => statement.Effect === 'Allow')
    .reduce(
      (sum, statement) =>
        sum +
        asList(statement.Action).filter((action) => action.startsWith('dynamodb:')).length *
          asList(statement.Resource).length,
      0,
    );

export type { CfnResource };
