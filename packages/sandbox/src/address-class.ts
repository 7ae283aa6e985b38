import { BlockList, isIP } from 'node:net';

/**
 * The kinds of address a sandbox's network proxy treats specially: a name on the allowlist that
 * resolves to one of these would lead a command to this machine, the local network or the cloud
 * provider's credentials rather than to the service the user allowed.
 */
export type AddressClass = 'metadata' | 'loopback' | 'unspecified' | 'private' | 'link-local' | 'multicast' | 'reserved';

/** Classes the user may open to the proxy (an internal registry, a local mirror); the rest never are. */
export const LOCAL_CLASSES: ReadonlySet<AddressClass> = new Set(['loopback', 'private', 'link-local']);

/** The class in words, for a refusal a person reads. */
export const CLASS_WORDS: Record<AddressClass, string> = {
  metadata: "a cloud metadata address (it hands out the machine's credentials)",
  loopback: 'a loopback address (this machine)',
  unspecified: 'the unspecified address (it reaches this machine)',
  private: 'a private-network address',
  'link-local': 'a link-local address',
  multicast: 'a multicast address',
  reserved: 'a broadcast or reserved address',
};

type Rule = [address: string, prefix: number, family: 'ipv4' | 'ipv6'];

// In order: the first class that holds an address is its class, so the metadata endpoints (inside
// link-local, ULA and CGNAT ranges) are named as what they are. Node's BlockList also matches an
// IPv4-mapped IPv6 address (::ffff:127.0.0.1) against the IPv4 rules, and an IPv4 address against
// rules written in mapped form, so each range is written once.
const RULES: ReadonlyArray<[AddressClass, Rule[]]> = [
  [
    'metadata',
    [
      ['169.254.169.254', 32, 'ipv4'], // AWS, GCP, Azure, OCI
      ['fd00:ec2::254', 128, 'ipv6'], // AWS over IPv6
      ['100.100.100.200', 32, 'ipv4'], // Alibaba Cloud
    ],
  ],
  ['loopback', [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]],
  [
    'unspecified',
    [
      ['0.0.0.0', 8, 'ipv4'], // "this network": connecting to 0.0.0.0 reaches this machine
      ['::', 128, 'ipv6'],
    ],
  ],
  [
    'private',
    [
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT, also used by VPNs (Tailscale)
      ['fc00::', 7, 'ipv6'], // unique local
      ['fec0::', 10, 'ipv6'], // site-local (deprecated, still routed by some stacks)
    ],
  ],
  ['link-local', [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]],
  ['multicast', [['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']]],
  [
    'reserved',
    [
      ['240.0.0.0', 4, 'ipv4'], // with 255.255.255.255, the broadcast address
      ['::', 96, 'ipv6'], // IPv4-compatible IPv6 (deprecated)
    ],
  ],
];

const LISTS: ReadonlyArray<[AddressClass, BlockList]> = RULES.map(([cls, rules]) => {
  const list = new BlockList();
  for (const [address, prefix, family] of rules) list.addSubnet(address, prefix, family);
  return [cls, list];
});

/**
 * The special class of an IP address, or undefined for an ordinary (public) one. Throws a
 * TypeError for a string that is not an IP address: callers classify what a resolver returned.
 */
export function addressClass(address: string): AddressClass | undefined {
  const family = isIP(address);
  if (family === 0) throw new TypeError(`"${address}" is not an IP address`);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return LISTS.find(([, list]) => list.check(address, type))?.[0];
}
