/** Standard Webhooks signing: `v1,` + base64(HMAC-SHA256(secret bytes, "<id>.<timestamp>.<body>")). */
import { createHmac } from 'node:crypto';

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}
