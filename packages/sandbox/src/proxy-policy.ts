import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { addressClass, CLASS_WORDS, LOCAL_CLASSES } from './address-class.js';

/** What a sandbox's network proxy lets through (ContainmentOptions.network with a domain allowlist). */
export interface ProxyPolicy {
  /** Domains commands may reach, each with its subdomains. */
  allow: readonly string[];
  /** Ports besides 80 and 443 that commands may reach on those domains. */
  extraPorts?: readonly number[];
  /**
   * Lets an allowed name lead to loopback, private and link-local addresses (an internal
   * registry). Cloud metadata, unspecified, multicast and reserved addresses stay refused.
   */
  privateAddresses?: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address of a name, in the resolver's order. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** Ports the proxy lets through without configuration: HTTP and HTTPS. */
export const STANDARD_PORTS: readonly number[] = [80, 443];

/**
 * Why the proxy will not open a connection: `status` is what the command's client gets (400 for a
 * request it cannot read, 403 for a policy refusal, 502 when the name does not resolve),
 * `message` tells the person reading it what to change.
 */
export class ProxyRefusal extends Error {
  readonly status: 400 | 403 | 502;

  constructor(status: 400 | 403 | 502, message: string) {
    super(message);
    this.name = 'ProxyRefusal';
    this.status = status;
  }
}

/** `host` as the allowlist compares it: lower case, no brackets around IPv6, no final dot. */
export function normalHost(host: string): string {
  return host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

/** Whether `host` is one of `allow` or a subdomain of one. */
export function hostAllowed(host: string, allow: readonly string[]): boolean {
  const h = normalHost(host);
  return allow.some((d) => h === d || h.endsWith(`.${d}`));
}

const PREFIX = 'Infinity Code:';

/**
 * Decides whether a command may reach `host:port`, and returns the addresses it may connect to:
 * the caller connects to exactly these, never to the name again, so a DNS answer that changes
 * between this check and the connection (rebinding) cannot lead anywhere unchecked. Every
 * address the name has must pass, not only the one used, so the answer does not depend on which
 * address a client would try first. Throws a ProxyRefusal.
 */
export async function authorize(host: string, port: number, policy: ProxyPolicy, resolve: Resolver = systemResolver): Promise<ResolvedAddress[]> {
  const name = normalHost(host);
  if (!hostAllowed(name, policy.allow)) {
    throw new ProxyRefusal(403, `${PREFIX} ${name} is not in the sandbox's network allowlist (sandbox.network in the config).\n`);
  }
  if (!STANDARD_PORTS.includes(port) && !(policy.extraPorts ?? []).includes(port)) {
    throw new ProxyRefusal(
      403,
      `${PREFIX} port ${port} of ${name} is refused: the sandbox's proxy lets through ports 80 and 443 only. ` +
        `To open another port, add it to sandbox.networkExtraPorts in your config.\n`,
    );
  }
  const family = isIP(name);
  let addresses: ResolvedAddress[];
  if (family !== 0) {
    addresses = [{ address: name, family: family === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new ProxyRefusal(502, `${PREFIX} ${name} could not be resolved (${code}).\n`);
    }
    if (addresses.length === 0) throw new ProxyRefusal(502, `${PREFIX} ${name} could not be resolved (no addresses).\n`);
  }
  for (const { address } of addresses) {
    const cls = addressClass(address);
    if (cls === undefined || (policy.privateAddresses === true && LOCAL_CLASSES.has(cls))) continue;
    const resolvesTo = address === name ? `${name} is` : `${name} resolves to ${address},`;
    const fix = LOCAL_CLASSES.has(cls)
      ? 'If this host is meant to be reached (an internal registry, a local mirror), set sandbox.networkPrivateAddresses ' +
        'to true in your own config.'
      : 'No setting opens it.';
    throw new ProxyRefusal(
      403,
      `${PREFIX} ${resolvesTo} ${CLASS_WORDS[cls]}; the sandbox's proxy does not connect to loopback, private, link-local ` +
        `or metadata addresses. ${fix}\n`,
    );
  }
  return addresses;
}
