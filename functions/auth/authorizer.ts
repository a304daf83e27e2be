// The API Gateway Lambda authorizer (HTTP API, simple responses, cached per Authorization header). It verifies the
// JWT only and annotates, never denies: see shared/auth/authorizer.ts.
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { annotate } from '#shared/auth/authorizer';

export const handler = async (event: APIGatewayRequestAuthorizerEventV2) => {
  const authorization = event.headers?.['authorization'] ?? event.headers?.['Authorization'];
  return { isAuthorized: true, context: await annotate(authorization) };
};
