import type { APIGatewayProxyResultV2 } from 'aws-lambda';
import { clock } from '#shared/clock';
import { type Problem, problemBody } from '#shared/http/problems';

/** What a domain-facing handler returns; the factory serialises it. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Raw bytes instead of JSON (file downloads). */
  raw?: { base64: string; contentType: string };
}

export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
export const accepted = (body: unknown): Reply => ({ status: 202, body });

/** The success envelope of contract section 1. */
export const success = (message: string, extra: Record<string, unknown> = {}): Reply => ({
  status: 200,
  body: { code: 'success', message, server_time: clock.nowIso(), ...extra },
});

export const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, PUT, DELETE, PATCH, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, Idempotency-Key, X-Request-Id, X-Platform-ID',
  'Access-Control-Expose-Headers': 'X-Request-Id, Retry-After, Allow',
  'Access-Control-Max-Age': '600',
} as const;

/** A problem as a reply: problem+json, with the problem's own headers (`Retry-After`). */
export const problemAsReply = (problem: Problem, requestId: string): Reply => ({
  status: problem.status,
  body: problemBody(problem, requestId),
  headers: { 'Content-Type': 'application/problem+json', ...problem.headers },
});

/** The Lambda result for a reply: JSON (or raw bytes), CORS and the request id on every answer. */
export function toResult(reply: Reply, requestId: string): APIGatewayProxyResultV2 {
  const common = { ...CORS_HEADERS, 'X-Request-Id': requestId };
  if (reply.raw) {
    return {
      statusCode: reply.status,
      headers: { ...common, 'Content-Type': reply.raw.contentType, ...reply.headers },
      body: reply.raw.base64,
      isBase64Encoded: true,
    };
  }
  return {
    statusCode: reply.status,
    headers: { ...common, 'Content-Type': 'application/json; charset=utf-8', ...reply.headers },
    body: JSON.stringify(reply.body),
  };
}
