/** Calls a handler module the way API Gateway would, with the authorizer's context for `caller`. */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { lambdaContext, proxyEvent } from '../../lib/local/events.ts';
import { toAuthorizerContext } from '../../shared/auth/authorizer.ts';
import type { Caller } from '../../shared/auth/caller.ts';
import type { Handler } from '../../shared/http/endpoint.ts';

export interface Invocation {
  method?: string;
  path?: string;
  params?: Record<string, string>;
  query?: string;
  body?: unknown;
  headers?: Record<string, string>;
  caller?: Caller | null;
  /** The caller's address as API Gateway saw it (default 127.0.0.1). */
  sourceIp?: string;
}

export async function invoke<T = Record<string, unknown>>(handler: Handler, call: Invocation = {}) {
  const body = call.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(call.body));
  const event = proxyEvent(
    {
      method: call.method ?? 'POST',
      path: call.path ?? '/',
      rawQueryString: call.query ?? '',
      headers: { 'content-type': 'application/json', ...call.headers },
      body,
      routeKey: `${call.method ?? 'POST'} ${call.path ?? '/'}`,
      pathParameters: call.params ?? {},
      sourceIp: call.sourceIp ?? '127.0.0.1',
    },
    call.caller === undefined ? undefined : toAuthorizerContext(call.caller),
  );
  const result = (await handler(event, lambdaContext('test'))) as APIGatewayProxyStructuredResultV2;
  return {
    status: result.statusCode ?? 200,
    body: JSON.parse(result.body ?? 'null') as T,
    headers: result.headers ?? {},
  };
}
