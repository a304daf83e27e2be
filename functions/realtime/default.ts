// WebSocket $default: any frame that is not a known action.
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2 } from 'aws-lambda';
import { refusedOversized, sendFrame } from '#shared/notifications/realtime';

export const handler = async (event: APIGatewayProxyWebsocketEventV2): Promise<APIGatewayProxyResultV2> => {
  if (await refusedOversized(event.requestContext.connectionId, event.body)) return { statusCode: 200 };
  await sendFrame(event.requestContext.connectionId, {
    type: 'error',
    code: 'unknown_action',
    message: 'send {"action":"subscribe","channels":["user.<id>", "org.<id>", "planning.<id>"]}',
  });
  return { statusCode: 200 };
};
