// WebSocket route `subscribe`: {"action":"subscribe","channels":[…]}; the answer frames go through PostToConnection.
// A frame over 32 KB is refused unread; the frame's arrival time (not the invocation's) counts for the rate limit.
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2 } from 'aws-lambda';
import { isDependencyFailure } from '#shared/aws/faults';
import { nestsDeeperThan } from '#shared/http/json-depth';
import { refusedOversized, sendFrame, subscribe } from '#shared/notifications/realtime';

export const handler = async (event: APIGatewayProxyWebsocketEventV2): Promise<APIGatewayProxyResultV2> => {
  const connectionId = event.requestContext.connectionId;
  if (await refusedOversized(connectionId, event.body)) return { statusCode: 200 };
  let channels: unknown;
  try {
    if (nestsDeeperThan(event.body ?? '')) throw new SyntaxError('nested too deep');
    channels = (JSON.parse(event.body ?? '{}') as { channels?: unknown }).channels;
  } catch {
    await sendFrame(connectionId, {
      type: 'error',
      code: 'malformed_json',
      message: 'frames are JSON objects, nested at most 64 levels',
    });
    return { statusCode: 200 };
  }
  try {
    await subscribe(connectionId, channels, event.requestContext.requestTimeEpoch);
  } catch (error) {
    if (!isDependencyFailure(error)) throw error;
    // Without an answer the client would wait for `subscribed` for ever: tell it to send its subscribe again.
    await sendFrame(connectionId, {
      type: 'error',
      code: 'unavailable',
      message: 'the service could not subscribe you just now; send the subscribe frame again in a second',
    }).catch(() => undefined);
    return { statusCode: 503 };
  }
  return { statusCode: 200 };
};
