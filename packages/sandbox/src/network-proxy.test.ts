import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addressClass } from './address-class.js';
import { startNetworkProxy, type NetworkProxy } from './network-proxy.js';
import { authorize, hostAllowed, ProxyRefusal, type ResolvedAddress, type Resolver } from './proxy-policy.js';

it('a domain in the allowlist lets its subdomains through, and nothing that only ends like it', () => {
  const allow = ['registry.npmjs.org', 'github.com'];
  expect(hostAllowed('registry.npmjs.org', allow)).toBe(true);
  expect(hostAllowed('REGISTRY.npmjs.org.', allow)).toBe(true);
  expect(hostAllowed('codeload.github.com', allow)).toBe(true);
  expect(hostAllowed('evilgithub.com', allow)).toBe(false);
  expect(hostAllowed('github.com.evil.org', allow)).toBe(false);
  expect(hostAllowed('npmjs.org', allow)).toBe(false);
});

describe('address classes', () => {
  it.each([
    // address, its class (undefined: an ordinary public address)
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.254', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:192.168.0.1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['::ffff:169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['::ffff:224.0.0.251', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['8.8.8.8', undefined],
    ['172.32.0.1', undefined],
    ['100.128.0.1', undefined],
    ['192.169.0.1', undefined],
    ['2606:4700::1111', undefined],
    ['::ffff:8.8.8.8', undefined],
    ['fe00::1', undefined],
  ] as const)('%s is %s', (address, cls) => {
    expect(addressClass(address)).toBe(cls);
  });

  it('refuses to classify what is not an address', () => {
    expect(() => addressClass('localhost')).toThrow(TypeError);
  });
});

/** A resolver with fixed answers that counts how often it was asked. */
function fixedResolver(answers: Record<string, string[][]>): Resolver & { calls: number } {
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    resolve.calls++;
    const list = answers[host];
    if (!list || list.length === 0) throw Object.assign(new Error(`no answer for ${host}`), { code: 'ENOTFOUND' });
    // Each question gets the next answer (the last one repeats): a name that rebinds.
    const answer = list.length > 1 ? list.shift()! : list[0];
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  resolve.calls = 0;
  return resolve;
}

describe('authorize', () => {
  const refusal = async (p: Promise<unknown>): Promise<ProxyRefusal> => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProxyRefusal);
    return err as ProxyRefusal;
  };

  it('refuses a name when any of its addresses is private, naming the address and the setting that opens it', async () => {
    const resolve = fixedResolver({ 'registry.example.com': [['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '10.0.0.5']] });
    const err = await refusal(authorize('registry.example.com', 443, { allow: ['example.com'] }, resolve));
    expect(err.status).toBe(403);
    expect(err.message).toContain('registry.example.com resolves to 10.0.0.5, a private-network address');
    expect(err.message).toContain('sandbox.networkPrivateAddresses');
    // With the opt-in every address passes, and all of them are what the caller may connect to.
    expect(await authorize('registry.example.com', 443, { allow: ['example.com'], privateAddresses: true }, resolve)).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      { address: '10.0.0.5', family: 4 },
    ]);
  });

  it('refuses metadata, unspecified and mapped-loopback addresses, the first two even with the opt-in', async () => {
    const resolve = fixedResolver({ 'a.example': [['169.254.169.254']], 'b.example': [['0.0.0.0']], 'c.example': [['::ffff:127.0.0.1']] });
    const open = { allow: ['example'], privateAddresses: true };
    expect((await refusal(authorize('a.example', 80, open, resolve))).message).toMatch(/a cloud metadata address .*No setting opens it/);
    expect((await refusal(authorize('b.example', 80, open, resolve))).message).toContain('the unspecified address');
    expect((await refusal(authorize('c.example', 80, { allow: ['example'] }, resolve))).message).toContain(
      'c.example resolves to ::ffff:127.0.0.1, a loopback address',
    );
  });

  it('checks a literal address without resolving it', async () => {
    const resolve = fixedResolver({});
    const err = await refusal(authorize('[::1]', 443, { allow: ['::1'] }, resolve));
    expect(err.message).toContain('::1 is a loopback address');
    expect(await authorize('127.0.0.1', 443, { allow: ['127.0.0.1'], privateAddresses: true }, resolve)).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(resolve.calls).toBe(0);
  });

  it('lets through ports 80 and 443 and the configured extra ones only, before resolving anything', async () => {
    const resolve = fixedResolver({ 'registry.npmjs.org': [['104.16.0.35']] });
    const allow = ['registry.npmjs.org'];
    const err = await refusal(authorize('registry.npmjs.org', 22, { allow }, resolve));
    expect(err.status).toBe(403);
    expect(err.message).toContain('port 22 of registry.npmjs.org is refused');
    expect(err.message).toContain('sandbox.networkExtraPorts');
    expect(resolve.calls).toBe(0);
    expect(await authorize('registry.npmjs.org', 80, { allow }, resolve)).toHaveLength(1);
    expect(await authorize('registry.npmjs.org', 443, { allow }, resolve)).toHaveLength(1);
    expect(await authorize('registry.npmjs.org', 8443, { allow, extraPorts: [8443] }, resolve)).toHaveLength(1);
    await refusal(authorize('registry.npmjs.org', 8444, { allow, extraPorts: [8443] }, resolve));
  });

  it('a name that does not resolve is a 502 saying so', async () => {
    const err = await refusal(authorize('gone.example', 443, { allow: ['example'] }, fixedResolver({})));
    expect(err.status).toBe(502);
    expect(err.message).toContain('gone.example could not be resolved (ENOTFOUND)');
  });
});

describe('the proxy', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  /** A listener on `host` that answers each connection with `reply` and counts them. */
  const listener = async (host: string, reply: string): Promise<{ port: number; connections(): number }> => {
    let count = 0;
    const server: Server = createServer((c) => {
      count++;
      c.end(reply);
    });
    server.listen(0, host);
    await once(server, 'listening');
    cleanup.push(() => void server.close());
    return { port: (server.address() as { port: number }).port, connections: () => count };
  };

  const proxyWith = async (policy: Parameters<typeof startNetworkProxy>[1], resolve: Resolver): Promise<NetworkProxy> => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ic-proxy-'));
    const proxy = await startNetworkProxy(path.join(dir, 'proxy.sock'), policy, { resolve });
    cleanup.push(() => rm(dir, { recursive: true, force: true }), () => proxy.close());
    return proxy;
  };

  /** CONNECT `target` through the proxy: its status line and what came back through the tunnel. */
  const tunnel = async (proxy: NetworkProxy, target: string): Promise<string> => {
    const s = connect(proxy.socketPath);
    s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    let out = '';
    s.on('data', (d: Buffer) => (out += d.toString()));
    await once(s, 'end');
    s.destroy();
    const [head, ...body] = out.split('\r\n\r\n');
    return `${head.split('\r\n')[0]}|${body.join('').trim()}`;
  };

  it('connects to the address it checked, never asking DNS again (a name that rebinds goes nowhere new)', async () => {
    // All of 127/8 is this machine's loopback: the listener is on .2 only, the name's second answer .3.
    const server = await listener('127.0.0.2', 'the checked address');
    const resolve = fixedResolver({ 'rebind.example': [['127.0.0.2'], ['127.0.0.3']] });
    const proxy = await proxyWith({ allow: ['rebind.example'], extraPorts: [server.port], privateAddresses: true }, resolve);
    expect(await tunnel(proxy, `rebind.example:${server.port}`)).toBe('HTTP/1.1 200 Connection Established|the checked address');
    expect(resolve.calls).toBe(1);
    expect(server.connections()).toBe(1);
  });

  it('refuses a tunnel to a name with a loopback address among public ones, and a port not let through', async () => {
    const server = await listener('127.0.0.1', 'host listener');
    const resolve = fixedResolver({ 'mixed.example': [['93.184.215.14', '127.0.0.1']] });
    const proxy = await proxyWith({ allow: ['mixed.example', '127.0.0.1'], extraPorts: [server.port] }, resolve);
    expect(await tunnel(proxy, `mixed.example:${server.port}`)).toMatch(
      /^HTTP\/1\.1 403 Forbidden\|Infinity Code: mixed\.example resolves to 127\.0\.0\.1, a loopback address/,
    );
    expect(await tunnel(proxy, '127.0.0.1:22')).toMatch(/^HTTP\/1\.1 403 Forbidden\|Infinity Code: port 22 of 127\.0\.0\.1 is refused/);
    expect(server.connections()).toBe(0);
  });

  it('refuses a plain http:// request to a loopback address the same way', async () => {
    const server = await listener('127.0.0.1', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi');
    const proxy = await proxyWith({ allow: ['localhost'], extraPorts: [server.port] }, fixedResolver({ localhost: [['::1', '127.0.0.1']] }));
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ socketPath: proxy.socketPath, path: `http://localhost:${server.port}/x`, headers: { host: `localhost:${server.port}` } }, (r) => {
        let body = '';
        r.on('data', (d: Buffer) => (body += d.toString()));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(res.status).toBe(403);
    expect(res.body).toContain('localhost resolves to ::1, a loopback address');
    expect(server.connections()).toBe(0);
  });
});
