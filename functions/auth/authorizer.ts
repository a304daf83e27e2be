// The API Gateway Lambda authorizer (HTTP API, simple responses). It annotates and never denies: see authorizer.ts.
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { authenticate, toAuthorizerContext } from '#shared/auth/authorizer';

export const handler = async (event: APIGatewayRequestAuthorizerEventV2) => {
  const authorization = event.headers?.['authorization'] ?? event.headers?.['Authorization'];
  return { isAuthorized: true, context: toAuthorizerContext(await authenticate(authorization)) };
};
