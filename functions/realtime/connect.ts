// WebSocket $connect: `?token=<bearer token>` is checked as the HTTP authorizer checks it; anything wrong is a 401.
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2 } from 'aws-lambda';
import { authenticateSession } from '#shared/auth/authorizer';
import { isDependencyFailure } from '#shared/aws/faults';
import { isDomainError } from '#shared/errors';
import { rememberConnection } from '#shared/notifications/realtime';

type ConnectEvent = APIGatewayProxyWebsocketEventV2 & { queryStringParameters?: Record<string, string | undefined> };

export const handler = async (event: ConnectEvent): Promise<APIGatewayProxyResultV2> => {
  try {
    const session = await authenticateSession(`Bearer ${event.queryStringParameters?.['token'] ?? ''}`);
    if (!session) return { statusCode: 401, body: 'Unauthorized' };
    await rememberConnection(event.requestContext.connectionId, session);
    return { statusCode: 200 };
  } catch (error) {
    // Could not check the token or store the connection: not the client's fault, and worth a retry.
    if (isDependencyFailure(error) || isDomainError(error, 'unavailable')) {
      return { statusCode: 503, body: 'Service Unavailable' };
    }
    throw error;
  }
};
