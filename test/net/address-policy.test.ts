import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { checkUrlSyntax, createAddressPolicy, refusedAddressReason } from '../../src/net/address-policy.ts';

const noAllow = createAddressPolicy([]);

describe('internal or local addresses are refused (protocol §4, §8)', () => {
  // [address, expected reason or null when it may be connected to]
  const table: [string, string | null][] = [
    // IPv4, one of each refused range
    ['0.0.0.0', '0.0.0.0 is a "this network" address'],
    ['10.0.0.1', '10.0.0.1 is a private address'],
    ['172.16.0.1', '172.16.0.1 is a private address'],
    ['172.31.255.254', '172.31.255.254 is a private address'],
    ['192.168.1.1', '192.168.1.1 is a private address'],
    ['127.0.0.1', '127.0.0.1 is a loopback address'],
    ['127.255.0.9', '127.255.0.9 is a loopback address'],
    ['169.254.169.254', '169.254.169.254 is a link-local address'],
    ['100.64.0.1', '100.64.0.1 is a carrier-grade NAT address'],
    ['100.127.255.255', '100.127.255.255 is a carrier-grade NAT address'],
    ['224.0.0.1', '224.0.0.1 is a multicast address'],
    ['239.255.255.250', '239.255.255.250 is a multicast address'],
    ['255.255.255.255', '255.255.255.255 is the broadcast address'],
    ['240.0.0.1', '240.0.0.1 is a reserved address'],
    ['198.18.0.1', '198.18.0.1 is a benchmarking address'],
    ['198.19.255.1', '198.19.255.1 is a benchmarking address'],
    ['192.0.2.1', '192.0.2.1 is a documentation address'],
    ['198.51.100.7', '198.51.100.7 is a documentation address'],
    ['203.0.113.9', '203.0.113.9 is a documentation address'],
    ['192.0.0.8', '192.0.0.8 is an IETF protocol assignment address'],
    ['192.88.99.1', '192.88.99.1 is a 6to4 relay anycast address'],
    // IPv6
    ['::1', '::1 is a loopback address'],
    ['::', ':: is the unspecified address'],
    ['fc00::1', 'fc00::1 is a unique-local address'],
    ['fd12::1', 'fd12::1 is a unique-local address'],
    ['fe80::1', 'fe80::1 is a link-local address'],
    ['fe80::1%eth0', 'fe80::1%eth0 is a link-local address'],
    ['fec0::1', 'fec0::1 is a site-local address'],
    ['ff02::1', 'ff02::1 is a multicast address'],
    ['::ffff:127.0.0.1', '::ffff:127.0.0.1 is the IPv4-mapped form of 127.0.0.1, a loopback address'],
    ['::ffff:7f00:1', '::ffff:7f00:1 is the IPv4-mapped form of 127.0.0.1, a loopback address'],
    ['::ffff:10.1.2.3', '::ffff:10.1.2.3 is the IPv4-mapped form of 10.1.2.3, a private address'],
    ['::127.0.0.1', '::127.0.0.1 is an IPv4-compatible address (deprecated)'],
    ['::8.8.8.8', '::8.8.8.8 is an IPv4-compatible address (deprecated)'],
    ['2002:7f00:0001::', '2002:7f00:0001:: is a 6to4 address embedding 127.0.0.1, a loopback address'],
    ['2002:a9fe:a9fe::1', '2002:a9fe:a9fe::1 is a 6to4 address embedding 169.254.169.254, a link-local address'],
    ['64:ff9b::10.0.0.1', '64:ff9b::10.0.0.1 is a NAT64 address embedding 10.0.0.1, a private address'],
    ['64:ff9b:1::8.8.8.8', '64:ff9b:1::8.8.8.8 is a local-use NAT64 address'],
    ['2001:db8::1', '2001:db8::1 is a documentation address'],
    ['3fff::1', '3fff::1 is a documentation address'],
    ['2001:0::1', '2001:0::1 is a Teredo address'],
    ['2001:2::1', '2001:2::1 is a benchmarking address'],
    ['100::1', '100::1 is not a global unicast address'],
    ['4000::1', '4000::1 is not a global unicast address'],
    ['::ffff:0:7f00:1', '::ffff:0:7f00:1 is not a global unicast address'],
    // Not an address at all
    ['localhost', 'localhost is not an IP address'],
    ['2130706433', '2130706433 is not an IP address'],
    // Public
    ['8.8.8.8', null],
    ['1.1.1.1', null],
    ['172.32.0.1', null],
    ['100.128.0.1', null],
    ['2606:4700:4700::1111', null],
    ['::ffff:8.8.8.8', null],
    ['2002:808:808::1', null],
    ['64:ff9b::8.8.8.8', null],
    ['[2606:4700:4700::1111]', null],
  ];

  it.each(table)('%s → %s', (address, expected) => {
    expect(refusedAddressReason(address, noAllow)).toBe(expected);
  });
});

describe('URLs an integrator gives us: https, no credentials, literal IPs checked after WHATWG normalisation', () => {
  const table: [string, { ok: true; host: string } | { ok: false; reason: string }][] = [
    ['https://example.com/channel', { ok: true, host: 'example.com' }],
    ['https://EXAMPLE.com:8443/x?y=1', { ok: true, host: 'example.com:8443' }],
    ['https://8.8.8.8/', { ok: true, host: '8.8.8.8' }],
    ['https://[2606:4700:4700::1111]/', { ok: true, host: '[2606:4700:4700::1111]' }],
    ['https://2130706433/', { ok: false, reason: '127.0.0.1 is a loopback address' }],
    ['https://0x7f.1/', { ok: false, reason: '127.0.0.1 is a loopback address' }],
    ['https://0177.0.0.1/', { ok: false, reason: '127.0.0.1 is a loopback address' }],
    ['https://127.1/', { ok: false, reason: '127.0.0.1 is a loopback address' }],
    ['https://127.0.0.1./', { ok: false, reason: '127.0.0.1 is a loopback address' }],
    ['https://0/', { ok: false, reason: '0.0.0.0 is a "this network" address' }],
    ['https://0xa9fea9fe/latest/meta-data', { ok: false, reason: '169.254.169.254 is a link-local address' }],
    ['https://[::1]:8443/', { ok: false, reason: '::1 is a loopback address' }],
    [
      'https://[::ffff:127.0.0.1]/',
      { ok: false, reason: '::ffff:7f00:1 is the IPv4-mapped form of 127.0.0.1, a loopback address' },
    ],
    ['https://localhost/', { ok: false, reason: 'localhost is a loopback host name' }],
    ['https://api.localhost/', { ok: false, reason: 'api.localhost is a loopback host name' }],
    ['http://example.com/', { ok: false, reason: 'the URL must use https, not http' }],
    ['ftp://example.com/', { ok: false, reason: 'the URL must use https, not ftp' }],
    ['https://user:pass@example.com/', { ok: false, reason: 'the URL must not contain a user name or password' }],
    ['https://user@example.com/', { ok: false, reason: 'the URL must not contain a user name or password' }],
    ['example.com/channel', { ok: false, reason: 'the URL is not a valid absolute URL' }],
    ['https://', { ok: false, reason: 'the URL is not a valid absolute URL' }],
    ['https://999.1.1.1/', { ok: false, reason: 'the URL is not a valid absolute URL' }],
  ];

  it.each(table)('%s', (url, expected) => {
    const result = checkUrlSyntax(url, noAllow);
    if (expected.ok) {
      expect(result.ok).toBe(true);
      expect(result.ok && result.url.host).toBe(expected.host);
    } else {
      expect(result).toEqual({ ok: false, reason: expected.reason, failure: expect.any(String) });
    }
  });
});

describe('OUTBOUND_ALLOW exempts CIDRs and host names', () => {
  it('exempts addresses inside an allowed CIDR and nothing outside it', () => {
    const policy = createAddressPolicy(['127.0.0.0/8', 'fd00::/8']);
    expect(refusedAddressReason('127.0.0.1', policy)).toBeNull();
    expect(refusedAddressReason('127.9.9.9', policy)).toBeNull();
    expect(refusedAddressReason('fd00::5', policy)).toBeNull();
    expect(refusedAddressReason('10.0.0.1', policy)).toBe('10.0.0.1 is a private address');
    expect(refusedAddressReason('fc00::1', policy)).toBe('fc00::1 is a unique-local address');
    expect(refusedAddressReason('::1', policy)).toBe('::1 is a loopback address');
  });

  it('judges an IPv4-mapped address by the IPv4 it maps, allow list included', () => {
    const policy = createAddressPolicy(['127.0.0.1']);
    expect(refusedAddressReason('::ffff:127.0.0.1', policy)).toBeNull();
    expect(refusedAddressReason('::ffff:127.0.0.2', policy)).toMatch(/IPv4-mapped form of 127\.0\.0\.2, a loopback/);
  });

  it('takes a bare address as a single-address CIDR', () => {
    const policy = createAddressPolicy([' 10.0.0.1 ', '::1']);
    expect(refusedAddressReason('10.0.0.1', policy)).toBeNull();
    expect(refusedAddressReason('10.0.0.2', policy)).toBe('10.0.0.2 is a private address');
    expect(refusedAddressReason('::1', policy)).toBeNull();
  });

  it('exempts a host name whatever it resolves to, and only that name', () => {
    const policy = createAddressPolicy(['Integrator.Test.']);
    expect(refusedAddressReason('127.0.0.1', policy, 'integrator.test')).toBeNull();
    expect(refusedAddressReason('10.0.0.1', policy, 'INTEGRATOR.TEST.')).toBeNull();
    expect(refusedAddressReason('127.0.0.1', policy, 'api.integrator.test')).toBe('127.0.0.1 is a loopback address');
    expect(refusedAddressReason('127.0.0.1', policy)).toBe('127.0.0.1 is a loopback address');
  });

  it('lets an allowed localhost and allowed literal addresses through the URL check', () => {
    const policy = createAddressPolicy(['localhost', '127.0.0.0/8']);
    expect(checkUrlSyntax('https://localhost:8443/', policy).ok).toBe(true);
    expect(checkUrlSyntax('https://127.0.0.1:8443/', policy).ok).toBe(true);
    expect(checkUrlSyntax('https://0x7f.1/', policy).ok).toBe(true);
    expect(checkUrlSyntax('https://[::1]/', policy)).toMatchObject({ ok: false, reason: '::1 is a loopback address' });
    expect(checkUrlSyntax('http://localhost/', policy)).toMatchObject({ ok: false });
  });

  it('ignores blank entries (an empty OUTBOUND_ALLOW split on commas)', () => {
    const policy = createAddressPolicy(['', '  ']);
    expect(policy.allowedCidrs).toHaveLength(0);
    expect(policy.allowedHosts.size).toBe(0);
  });

  const badEntries = [
    '10.0.0.0/33',
    '::1/129',
    '10.0.0/8',
    'exa mple.com',
    'https://example.com',
    '10.0.0',
    '*.example.com',
    '1.2.3.4/8/1',
    '-bad.example',
  ];
  it.each(badEntries)('refuses the entry %j with a ConfigError naming OUTBOUND_ALLOW', (entry) => {
    expect(() => createAddressPolicy(['localhost', entry])).toThrow(ConfigError);
    expect(() => createAddressPolicy([entry])).toThrow(/OUTBOUND_ALLOW/);
  });
});
