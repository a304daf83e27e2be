// WebSocket $default: any frame that is not a known action. The keepalive (`{"action":"ping"}`) is answered with
// `{"type":"pong"}`; anything else with an `unknown_action` error.
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2 } from 'aws-lambda';
import { isKeepalive, KEEPALIVE_ANSWER } from '#shared/notifications/keepalive';
import { refusedOversized, sendFrame } from '#shared/notifications/realtime';

export const handler = async (event: APIGatewayProxyWebsocketEventV2): Promise<APIGatewayProxyResultV2> => {
  const connectionId = event.requestContext.connectionId;
  if (isKeepalive(event.body)) {
    await sendFrame(connectionId, KEEPALIVE_ANSWER);
    return { statusCode: 200 };
  }
  if (await refusedOversized(connectionId, event.body)) return { statusCode: 200 };
  await sendFrame(connectionId, {
    type: 'error',
    code: 'unknown_action',
    message:
      'send {"action":"subscribe","channels":["user.<id>", "org.<id>", "planning.<id>"]} (or {"action":"ping"} to keep the connection open)',
  });
  return { statusCode: 200 };
};
