// $default route of the HTTP API: any method and path that is no operation. Without it API Gateway would answer its
// own `{"message":"Not Found"}`; the contract wants problem+json for every error, with CORS and X-Request-Id.
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { notFound, problemBody } from '#shared/http/problems';
import { CORS_HEADERS } from '#shared/http/responses';

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> => {
  const requestId = event.headers?.['x-request-id']?.slice(0, 200) || randomUUID();
  return {
    statusCode: 404,
    headers: { ...CORS_HEADERS, 'X-Request-Id': requestId, 'Content-Type': 'application/problem+json' },
    body: JSON.stringify(problemBody(notFound('operation'), requestId)),
  };
};
