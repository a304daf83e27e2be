/**
 * The local host holds each function to its Lambda timeout, as the cloud does (issue 35 item 12): past it, API
 * Gateway's own 500. Its own file: the functions' DynamoDB client is made once per process, so the fault proxy must
 * stand in front of the first host the file starts.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.ts';
import { client, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let proxy: FaultProxy;
let host: RunningHost;

beforeAll(async () => {
  proxy = await startFaultProxy(inject('endpoints').dynamodb, 'dynamodb');
  host = await startTestHost({ dynamodb: proxy.url });
});
afterAll(async () => {
  delete process.env['LOCAL_FUNCTION_TIMEOUT_MS'];
  await proxy?.set('pass');
  await host?.stop();
  await proxy?.close();
});

describe('the functions’ time limit', () => {
  it('answers as API Gateway does when a function passes its timeout (shortened here from 29 s)', async () => {
    const token = (await loginAs(client(host.url), ADMIN.email, ADMIN.password)).bearer_token;
    try {
      process.env['LOCAL_FUNCTION_TIMEOUT_MS'] = '1500';
      await proxy.set('stall');
      const timedOut = await fetch(`${host.url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(timedOut.status).toBe(500);
      expect(await timedOut.json()).toEqual({ message: 'Internal Server Error' });
      // Without the short limit the same stall is the function's own 503 (its DynamoDB timeouts end within 29 s).
      delete process.env['LOCAL_FUNCTION_TIMEOUT_MS'];
      const unavailable = await fetch(`${host.url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(unavailable.status).toBe(503);
    } finally {
      delete process.env['LOCAL_FUNCTION_TIMEOUT_MS'];
      await proxy.set('pass');
    }
  }, 90_000);
});
