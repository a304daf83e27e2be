// WebSocket $disconnect: the connection and its subscriptions go.
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2 } from 'aws-lambda';
import { forgetConnection } from '#shared/notifications/realtime';

export const handler = async (event: APIGatewayProxyWebsocketEventV2): Promise<APIGatewayProxyResultV2> => {
  await forgetConnection(event.requestContext.connectionId);
  return { statusCode: 200 };
};
