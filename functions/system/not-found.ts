// $default route of the HTTP API: any method and path that is no operation. Without it API Gateway would answer its
// own `{"message":"Not Found"}`; the contract wants problem+json for every error, with CORS and X-Request-Id.
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { notFound } from '#shared/http/problems';
import { problemAsReply, toResult } from '#shared/http/responses';

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> => {
  const requestId = event.headers?.['x-request-id']?.slice(0, 200) || randomUUID();
  return toResult(problemAsReply(notFound('operation'), requestId), requestId);
};
