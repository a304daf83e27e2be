// $default route of the HTTP API: any method and path that is no operation. Without it API Gateway would answer its
// own `{"message":"Not Found"}`; the contract wants problem+json for every error, with CORS and X-Request-Id. A path
// the route table knows under other methods is a 405 with `Allow` (RFC 9110), as in the local host; any other a 404.
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { problemAsReply, toResult } from '#shared/http/responses';
import { noRouteProblem } from '#shared/http/route-match';

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> => {
  const requestId = event.headers?.['x-request-id']?.slice(0, 200) || randomUUID();
  const method = event.requestContext?.http?.method ?? 'GET';
  const problem = noRouteProblem(method, event.rawPath ?? '/');
  return toResult(problemAsReply(problem, requestId), requestId);
};
