/**
 * A token that cannot be checked now (the signing keys cannot be read: a key store blip) is neither a caller nor a
 * bad token: the authorizer annotates it "unchecked" and never denies, the handler kit then answers 503 `unavailable`
 * with Retry-After: 1, and WebSocket $connect a plain 503 (shared/auth/authorizer.ts).
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { lambdaContext, proxyEvent } from '../../lib/local/events.ts';

vi.mock('../../shared/auth/keys.ts', () => ({
  signingKeys: () => Promise.reject(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' })),
}));

const { annotate } = await import('../../shared/auth/authorizer.ts');
const me = (await import('../../functions/accounts/me.ts')).handler;
const connect = (await import('../../functions/realtime/connect.ts')).handler;

const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';

describe('a token that cannot be checked now', () => {
  it('is annotated unchecked by the authorizer, which never denies', async () => {
    expect(await annotate(`Bearer ${TOKEN}`)).toEqual({ authenticated: 'unchecked' });
  });

  it('is answered 503 unavailable with Retry-After: 1 by the handler kit', async () => {
    const event = proxyEvent(
      {
        method: 'GET',
        path: '/v1/me',
        rawQueryString: '',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: Buffer.alloc(0),
        routeKey: 'GET /v1/me',
        pathParameters: {},
        sourceIp: '127.0.0.1',
      },
      { authenticated: 'unchecked' },
    );
    const result = (await me(event, lambdaContext('test'))) as APIGatewayProxyStructuredResultV2;
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
    expect(result.headers?.['WWW-Authenticate']).toBeUndefined();
    expect(JSON.parse(result.body ?? 'null')).toMatchObject({
      type: 'https://dispatch.internal/problems/unavailable',
      title: 'Service unavailable',
      status: 503,
      code: 'unavailable',
      detail: 'the token could not be checked now; retry shortly',
      errors: [],
    });
  });

  it('is a 503 at WebSocket $connect, not a failed invocation', async () => {
    const event = { queryStringParameters: { token: TOKEN }, requestContext: { connectionId: 'c1' } };
    expect(await connect(event as unknown as Parameters<typeof connect>[0])).toEqual({
      statusCode: 503,
      body: 'Service Unavailable',
    });
  });
});
