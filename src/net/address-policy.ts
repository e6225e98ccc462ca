/**
 * Which addresses the service may connect to when it calls an integrator (protocol §4: "All are HTTPS, publicly
 * reachable; internal or local addresses are refused"; protocol §8: "URL: https, public").
 *
 * The rule is one table of refused CIDRs, each with the label that becomes the reason ("127.0.0.1 is a loopback
 * address"), a short table of IPv6 prefixes that embed an IPv4 address (judged by the IPv4 they reach), and a final
 * catch-all: an IPv6 address outside global unicast 2000::/3 is refused. `OUTBOUND_ALLOW` (docs/interfaces.md,
 * configuration) exempts CIDRs or host names, for development and tests only.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ConfigError } from '../errors.ts';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;
type Address = IPv4 | IPv6;
type Cidr = [Address, number];

/** The allow list (`OUTBOUND_ALLOW`) parsed once; build it with {@link createAddressPolicy}. */
export interface AddressPolicy {
  /** CIDR entries (a bare address counts as /32 or /128): addresses inside are exempt. */
  readonly allowedCidrs: readonly (readonly [Address, number])[];
  /** Host-name entries, lower case without a trailing dot: the name is exempt whatever it resolves to. */
  readonly allowedHosts: ReadonlySet<string>;
}

/**
 * Refused ranges, first match wins (so 255.255.255.255 is named "broadcast" before 240/4 calls it "reserved", and
 * ::1 is named before ::/96). The label completes the sentence "<address> is …".
 */
const refusedTable: readonly { cidr: string; label: string }[] = [
  // IPv4 (IANA special-purpose registry, RFC 6890 and successors)
  { cidr: '0.0.0.0/8', label: 'a "this network" address' },
  { cidr: '10.0.0.0/8', label: 'a private address' },
  { cidr: '100.64.0.0/10', label: 'a carrier-grade NAT address' },
  { cidr: '127.0.0.0/8', label: 'a loopback address' },
  { cidr: '169.254.0.0/16', label: 'a link-local address' },
  { cidr: '172.16.0.0/12', label: 'a private address' },
  { cidr: '192.0.0.0/24', label: 'an IETF protocol assignment address' },
  { cidr: '192.0.2.0/24', label: 'a documentation address' },
  { cidr: '192.88.99.0/24', label: 'a 6to4 relay anycast address' },
  { cidr: '192.168.0.0/16', label: 'a private address' },
  { cidr: '198.18.0.0/15', label: 'a benchmarking address' },
  { cidr: '198.51.100.0/24', label: 'a documentation address' },
  { cidr: '203.0.113.0/24', label: 'a documentation address' },
  { cidr: '224.0.0.0/4', label: 'a multicast address' },
  { cidr: '255.255.255.255/32', label: 'the broadcast address' },
  { cidr: '240.0.0.0/4', label: 'a reserved address' },
  // IPv6 (IANA IPv6 special-purpose registry)
  { cidr: '::/128', label: 'the unspecified address' },
  { cidr: '::1/128', label: 'a loopback address' },
  // Deprecated by RFC 4291 §2.5.5.1 and not routed as IPv4: refused whatever IPv4 it carries.
  { cidr: '::/96', label: 'an IPv4-compatible address (deprecated)' },
  // RFC 8215: where the IPv4 sits depends on the operator's prefix length, so we cannot tell what it reaches.
  { cidr: '64:ff9b:1::/48', label: 'a local-use NAT64 address' },
  { cidr: 'fc00::/7', label: 'a unique-local address' },
  { cidr: 'fe80::/10', label: 'a link-local address' },
  { cidr: 'fec0::/10', label: 'a site-local address' },
  { cidr: 'ff00::/8', label: 'a multicast address' },
  { cidr: '2001:db8::/32', label: 'a documentation address' },
  { cidr: '3fff::/20', label: 'a documentation address' },
  // Teredo tunnels carry an (obfuscated) IPv4 of the client and server: refused altogether.
  { cidr: '2001::/32', label: 'a Teredo address' },
  { cidr: '2001:2::/48', label: 'a benchmarking address' },
  { cidr: '2001:10::/28', label: 'an ORCHID address' },
  { cidr: '2001:20::/28', label: 'an ORCHIDv2 address' },
];

/**
 * IPv6 prefixes whose packets end up at an IPv4 address written inside them (at byte `ipv4At`): refused when that
 * IPv4 is refused, otherwise allowed, since the destination really is the public IPv4. (IPv4-mapped ::ffff:0:0/96
 * is handled before the tables: a dual-stack socket connects to exactly the IPv4 inside, so it is judged as that
 * IPv4, allow list included.)
 */
const embeddingTable: readonly { cidr: string; label: string; ipv4At: number }[] = [
  { cidr: '2002::/16', label: 'a 6to4 address', ipv4At: 2 },
  { cidr: '64:ff9b::/96', label: 'a NAT64 address', ipv4At: 12 },
];

const globalUnicast = ipaddr.parseCIDR('2000::/3');

const refusedRanges = refusedTable.map((r) => ({ range: ipaddr.parseCIDR(r.cidr), label: r.label }));
const embeddingRanges = embeddingTable.map((r) => ({ ...r, range: ipaddr.parseCIDR(r.cidr) }));

// RFC 1123 labels; the last label may not be all digits, or "10.0.0" would pass as a name (WHATWG reads it as IPv4).
const dnsLabel = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const hostNamePattern = new RegExp(`^(?=.{1,253}$)(?:${dnsLabel}\\.)*(?!\\d+$)${dnsLabel}$`);

/**
 * Build the policy from `OUTBOUND_ALLOW` entries: CIDRs (`127.0.0.0/8`, `::1/128`), bare addresses (taken as /32 or
 * /128) or host names (`localhost`). Blank entries are ignored, so an empty variable split on commas is no entry.
 * @throws ConfigError naming OUTBOUND_ALLOW when an entry is neither.
 */
export function createAddressPolicy(allow: readonly string[]): AddressPolicy {
  const allowedCidrs: Cidr[] = [];
  const allowedHosts = new Set<string>();
  for (const raw of allow) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    const cidr = parseStrictCidr(entry);
    if (cidr != null) {
      allowedCidrs.push(cidr);
      continue;
    }
    const host = normaliseHostName(entry);
    if (hostNamePattern.test(host)) {
      allowedHosts.add(host);
      continue;
    }
    throw new ConfigError(
      `OUTBOUND_ALLOW entry "${raw}" is neither a CIDR (like 127.0.0.0/8 or ::1/128) nor a host name (like localhost).`,
    );
  }
  return Object.freeze({ allowedCidrs: Object.freeze(allowedCidrs), allowedHosts });
}

/**
 * null when the address may be connected to, else the reason, e.g. "10.0.0.1 is a private address".
 * `hostname` is the name the address was resolved from: a host name on the allow list exempts whatever it resolves to.
 * Anything that is not an IP address is refused (with that reason) rather than guessed at.
 */
export function refusedAddressReason(address: string, policy: AddressPolicy, hostname?: string): string | null {
  if (hostname != null && policy.allowedHosts.has(normaliseHostName(hostname))) return null;
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // net.isIP accepts only canonical forms (no 0x7f.1 or 2130706433): addresses from DNS and WHATWG URLs are canonical.
  if (isIP(bare) === 0) return `${address} is not an IP address`;
  const parsed = parseAddress(bare);
  if (isAllowed(parsed, policy)) return null;
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) {
    const ipv4 = parsed.toIPv4Address();
    const label = isAllowed(ipv4, policy) ? null : refusedLabel(ipv4);
    return label == null ? null : `${address} is the IPv4-mapped form of ${ipv4.toString()}, ${label}`;
  }
  const label = refusedLabel(parsed);
  return label == null ? null : `${address} is ${label}`;
}

/**
 * Syntactic check of a URL an integrator gives us: https, no user:password, a host; literal IP hosts (after WHATWG
 * URL normalisation, which turns 0x7f.1, 2130706433, 0177.0.0.1 into 127.0.0.1) checked. Host names are only
 * resolved by `GuardedClient.validateUrl` and, again, at connect time.
 */
export function checkUrlSyntax(
  url: string,
  policy: AddressPolicy,
): { ok: true; url: URL } | { ok: false; reason: string } {
  return inspectUrl(url, policy);
}

/** {@link checkUrlSyntax} with the kind of failure, which the guarded client turns into its failure reason. */
export function inspectUrl(
  url: string,
  policy: AddressPolicy,
): { ok: true; url: URL } | { ok: false; reason: string; failure: 'invalid_url' | 'refused_address' } {
  const invalid = (reason: string) => ({ ok: false as const, reason, failure: 'invalid_url' as const });
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return invalid('the URL is not a valid absolute URL');
  }
  if (parsed.protocol !== 'https:') return invalid(`the URL must use https, not ${parsed.protocol.slice(0, -1)}`);
  if (parsed.username !== '' || parsed.password !== '') {
    return invalid('the URL must not contain a user name or password');
  }
  if (parsed.hostname === '') return invalid('the URL has no host');
  const literal = literalAddress(parsed.hostname);
  if (literal != null) {
    const reason = refusedAddressReason(literal, policy);
    if (reason != null) return { ok: false, reason, failure: 'refused_address' };
    return { ok: true, url: parsed };
  }
  const host = normaliseHostName(parsed.hostname);
  // RFC 6761 §6.3: localhost and its subdomains are loopback by definition; say so now instead of after a lookup.
  if ((host === 'localhost' || host.endsWith('.localhost')) && !policy.allowedHosts.has(host)) {
    return { ok: false, reason: `${parsed.hostname} is a loopback host name`, failure: 'refused_address' };
  }
  return { ok: true, url: parsed };
}

/** The IP address a URL hostname names, without IPv6 brackets, or null for a host name. */
export function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}

/** The label of the first refused range holding the address, or null when it is public. */
function refusedLabel(address: Address): string | null {
  for (const { range, label } of refusedRanges) {
    if (inRange(address, range)) return label;
  }
  for (const { range, label, ipv4At } of embeddingRanges) {
    if (inRange(address, range)) {
      const ipv4 = new ipaddr.IPv4(address.toByteArray().slice(ipv4At, ipv4At + 4));
      const inner = refusedLabel(ipv4);
      return inner == null ? null : `${label} embedding ${ipv4.toString()}, ${inner}`;
    }
  }
  if (address.kind() === 'ipv6' && !inRange(address, globalUnicast)) return 'not a global unicast address';
  return null;
}

function isAllowed(address: Address, policy: AddressPolicy): boolean {
  return policy.allowedCidrs.some((cidr) => inRange(address, cidr));
}

function inRange(address: Address, range: readonly [Address, number]): boolean {
  // ipaddr.js throws when the families differ; an IPv4 range never contains an IPv6 address and vice versa.
  return address.kind() === range[0].kind() && address.match([range[0], range[1]]);
}

function parseStrictCidr(entry: string): Cidr | null {
  const [addr = '', bits, ...rest] = entry.split('/');
  const family = isIP(addr);
  if (family === 0 || rest.length > 0) return null;
  const max = family === 4 ? 32 : 128;
  if (bits === undefined) return [parseAddress(addr), max];
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
  return [parseAddress(addr), Number(bits)];
}

/** Parse an address `net.isIP` accepted. */
function parseAddress(address: string): Address {
  if (isIP(address) === 4) return ipaddr.IPv4.parse(address);
  // ipaddr.js reads "::a.b.c.d" as the IPv4-mapped ::ffff:a.b.c.d, but it is the IPv4-compatible ::a.b.c.d. The WHATWG
  // IPv6 serialiser writes every address in hex, so the parse is exact. A zone (%eth0) only qualifies link-local
  // addresses and changes no verdict, and URL does not take one: it is dropped.
  const [withoutZone = address] = address.split('%');
  return ipaddr.IPv6.parse(new URL(`http://[${withoutZone}]/`).hostname.slice(1, -1));
}

function normaliseHostName(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
