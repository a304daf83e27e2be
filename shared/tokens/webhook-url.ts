/**
 * Webhook URLs (contract 4.2): https only (plus http://localhost in local mode), and in the cloud never a host that
 * resolves to a private, loopback or link-local address — checked when the URL is stored and again before delivery.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { invalidField } from '#shared/http/problems';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isPrivateAddress(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(v4) === 4) {
    const [a = 0, b = 0] = v4.split('.').map(Number);
    return (
      a === 10 ||
      a === 127 ||
      a === 0 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127) ||
      a >= 224
    );
  }
  const v6 = address.toLowerCase();
  return v6 === '::1' || v6 === '::' || v6.startsWith('fc') || v6.startsWith('fd') || v6.startsWith('fe80');
}

/** Throws a 400 at `field` for a URL the service will not call. */
export async function checkWebhookUrl(raw: string, field: string, local = process.env['DISPATCH_LOCAL'] === '1') {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidField(field, 'must be an absolute URL');
  }
  if (url.username || url.password) throw invalidField(field, 'must not carry credentials');
  if (url.protocol === 'http:' && local && LOCAL_HOSTS.has(url.hostname)) return url;
  if (url.protocol !== 'https:') throw invalidField(field, 'must be an https URL');
  if (local) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (addresses.length === 0) throw invalidField(field, 'must name a host that resolves');
  if (addresses.some(isPrivateAddress))
    throw invalidField(field, 'must not resolve to a private, loopback or link-local address');
  return url;
}
