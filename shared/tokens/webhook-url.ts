/**
 * Webhook URLs (contract 4.2): https only (plus http://localhost in local mode), and in the cloud never a host that
 * resolves to an address outside the public internet — checked when the URL is stored and again at each delivery,
 * where the connection then goes to the very address that was checked (shared/webhooks/transport.ts), so that a name
 * re-pointed after the check (DNS rebinding) cannot reach anything else.
 *
 * Addresses are judged as Node's `net.BlockList` sees them, which matches an IPv4-mapped IPv6 address
 * (`::ffff:127.0.0.1`, also written `::ffff:7f00:1`) against the IPv4 rules. The IPv6 ranges that carry an IPv4
 * address some other way (IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`,
 * Teredo `2001::/32`) are refused whole, like the site-local `fec0::/10` and the other special-purpose ranges.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { invalidAt } from '#shared/errors';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** IANA special-purpose ranges (RFC 6890 and successors) and multicast: nothing a partner's endpoint lives in. */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, the cloud metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT) ::ffff:0:a.b.c.d
  ['64:ff9b::', 96], // NAT64, well-known prefix: reaches the embedded IPv4 address
  ['64:ff9b:1::', 48], // NAT64, local use
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments, Teredo (2001::/32) included
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: reaches the embedded IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some stacks)
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** True for any address a webhook must not reach (an unparsable one included). */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return BLOCKED.check(bare, 'ipv4');
  if (family === 6) return BLOCKED.check(bare, 'ipv6');
  return true;
}

/** `dns.lookup` with `all: true`, or a stand-in (tests). */
export type WebhookLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: WebhookLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Where a checked URL may be reached: its name and the address (one of those checked) to connect to. */
export interface WebhookTarget {
  url: URL;
  /** Absent in local mode, where the URL is called as it is. */
  address?: { address: string; family: 4 | 6 };
}

/**
 * Checks `raw` and resolves its host once: every address it resolves to must be public (one bad address refuses the
 * URL, as the name could be re-pointed to it at any moment). Throws a 400 at `field` for a URL the service will not
 * call.
 */
export async function resolveWebhookTarget(
  raw: string,
  field: string,
  options: { local?: boolean; lookup?: WebhookLookup; blocked?: (address: string) => boolean } = {},
): Promise<WebhookTarget> {
  const local = options.local ?? process.env['DISPATCH_LOCAL'] === '1';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidAt(field, 'must be an absolute URL');
  }
  if (url.username || url.password) throw invalidAt(field, 'must not carry credentials');
  if (url.protocol === 'http:' && local && LOCAL_HOSTS.has(url.hostname)) return { url };
  if (url.protocol !== 'https:') throw invalidAt(field, 'must be an https URL');
  if (local) return { url };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [{ address: host, family: isIP(host) }]
    : await (options.lookup ?? systemLookup)(host).catch(() => []);
  if (addresses.length === 0) throw invalidAt(field, 'must name a host that resolves');
  if (addresses.some((a) => (options.blocked ?? isPrivateAddress)(a.address)))
    throw invalidAt(field, 'must not resolve to a private, loopback, link-local or other special-purpose address');
  const chosen = addresses[0]!;
  return { url, address: { address: chosen.address, family: chosen.family === 6 ? 6 : 4 } };
}

/** Throws a 400 at `field` for a URL the service will not call (T3, T5). */
export async function checkWebhookUrl(raw: string, field: string, local = process.env['DISPATCH_LOCAL'] === '1') {
  return (await resolveWebhookTarget(raw, field, { local })).url;
}
