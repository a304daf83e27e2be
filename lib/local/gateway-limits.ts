/**
 * API Gateway's quota on the request line and headers together (10 240 bytes, not adjustable, for HTTP and WebSocket
 * APIs alike): over it, the gateway answers 431 itself, before any route, authorizer or function. Node's own limit
 * (`maxHeaderSize`, 16 KiB by default) is raised above it so that the host, not the parser, decides, as the gateway
 * would (the parser's bare 431 then only stops a head over 64 KiB).
 */
import type { IncomingMessage } from 'node:http';

export const GATEWAY_HEAD_BYTES = 10_240;
export const PARSER_HEAD_BYTES = 64 * 1024;

/** The request line and every header as sent: `METHOD target HTTP/x.y` and each `name: value`. */
export function requestHeadBytes(request: IncomingMessage): number {
  let bytes = Buffer.byteLength(`${request.method} ${request.url} HTTP/${request.httpVersion}`);
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) bytes += Buffer.byteLength(`${raw[i]}: ${raw[i + 1]}`);
  return bytes;
}
