/**
 * One webhook POST to the address that was checked. The URL's host is resolved once (shared/tokens/webhook-url.ts),
 * every address it resolves to is judged, and the connection goes to the chosen checked address through a `lookup`
 * that answers only that address: no second resolution, so a name re-pointed after the check (DNS rebinding) reaches
 * nothing else. The URL's name stays the `Host` header and the TLS server name (SNI and certificate check).
 * Redirects are not followed.
 */

import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveWebhookTarget, type WebhookLookup } from '#shared/tokens/webhook-url';

const MAX_RESPONSE_CHARS = 500;

export interface WebhookAnswer {
  status: number;
  /** The start of the response body. */
  excerpt: string;
}

/** A `lookup` for `net.connect` that answers `address`, whatever the name (both of its calling forms). */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/**
 * POSTs `body` to `rawUrl`. Throws a domain error (invalid at `webhook_url`) for a URL or an address the service will not call,
 * and the network's own error for a failed attempt.
 */
export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; local?: boolean; lookup?: WebhookLookup; blocked?: (address: string) => boolean },
): Promise<WebhookAnswer> {
  const target = await resolveWebhookTarget(rawUrl, 'webhook_url', options);
  const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<WebhookAnswer>((done, fail) => {
    const sent = send(
      target.url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
        signal: AbortSignal.timeout(options.timeoutMs),
        ...(target.address ? { lookup: pinnedLookup(target.address.address, target.address.family) } : {}),
      },
      (response: IncomingMessage) => {
        let excerpt = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (excerpt.length < MAX_RESPONSE_CHARS) excerpt += chunk;
          if (excerpt.length >= MAX_RESPONSE_CHARS) response.destroy();
        });
        const finish = () => done({ status: response.statusCode ?? 0, excerpt: excerpt.slice(0, MAX_RESPONSE_CHARS) });
        response.on('end', finish);
        response.on('close', finish);
        response.on('error', finish);
      },
    );
    sent.on('error', fail);
    sent.end(body);
  });
}
