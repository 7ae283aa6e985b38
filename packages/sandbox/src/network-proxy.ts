import { createServer, request, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import { connect, type LookupFunction, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import { authorize, normalHost, ProxyRefusal, type ProxyPolicy, type ResolvedAddress, type Resolver } from './proxy-policy.js';

/**
 * The port on which, inside a sandbox with a domain allowlist, a bridge forwards to the proxy.
 * The sandbox's network namespace is its own, so no other program's port can be taken.
 */
export const PROXY_PORT = 3128;

/** Where a sandbox's commands find the proxy, as the usual variables. */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: 'localhost,127.0.0.1,::1',
    no_proxy: 'localhost,127.0.0.1,::1',
  };
}

interface Target {
  /** Lower case, IPv6 without brackets. */
  host: string;
  port: number;
  path: string;
}

/** `host:port` of a CONNECT request, or of an absolute http:// URL. */
function target(raw: string | undefined, connectForm: boolean): Target | undefined {
  if (!raw) return undefined;
  try {
    if (connectForm) {
      const u = new URL(`http://${raw}`);
      return { host: normalHost(u.hostname), port: Number(u.port || 443), path: '' };
    }
    const u = new URL(raw);
    if (u.protocol !== 'http:') return undefined;
    return { host: normalHost(u.hostname), port: Number(u.port || 80), path: `${u.pathname}${u.search}` };
  } catch {
    return undefined;
  }
}

/**
 * A `lookup` for net.connect and http.request that answers with the addresses `authorize`
 * checked instead of asking DNS again; with autoSelectFamily Node tries each in turn.
 */
function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_host, options, callback) => {
    if (options.all) callback(null, addresses.map((a) => ({ ...a })));
    else callback(null, addresses[0].address, addresses[0].family);
  };
}

export interface NetworkProxy {
  readonly socketPath: string;
  close(): Promise<void>;
}

export interface NetworkProxyOptions {
  /** How names are resolved; the system's resolver unless a test gives its own. */
  resolve?: Resolver;
}

/**
 * An HTTP proxy on a Unix socket that lets through only requests for allowed domains, on ports
 * 80 and 443 (and the policy's extra ports), to public addresses (and, if the policy says so,
 * local and private ones): CONNECT tunnels (HTTPS, git, package registries) and plain http://
 * requests. Sandboxes with a domain allowlist have no network but their loopback, where a bridge
 * (see PROXY_BRIDGE) forwards to this socket; everything else is refused with 403 and a reason a
 * person can act on (see authorize).
 */
export async function startNetworkProxy(socketPath: string, policy: ProxyPolicy, opts: NetworkProxyOptions = {}): Promise<NetworkProxy> {
  /** The target of a request and the addresses it may be reached at, or a ProxyRefusal. */
  const decide = async (raw: string | undefined, connectForm: boolean): Promise<Target & { lookup: LookupFunction }> => {
    const t = target(raw, connectForm);
    if (!t) {
      const want = connectForm ? 'host:port' : 'an absolute http:// URL (https goes through CONNECT)';
      throw new ProxyRefusal(400, `Infinity Code: the proxy cannot read the target ${JSON.stringify(raw ?? '')}; it takes ${want}.\n`);
    }
    return { ...t, lookup: pinnedLookup(await authorize(t.host, t.port, policy, opts.resolve)) };
  };
  const refusalOf = (err: unknown): ProxyRefusal =>
    err instanceof ProxyRefusal ? err : new ProxyRefusal(502, `Infinity Code: the proxy failed: ${String(err)}\n`);

  const server: Server = createServer((req: IncomingMessage, res) => {
    decide(req.url, false).then(
      (t) => {
        const upstream = request(
          // No agent: a pooled connection would outlive the check that let it through.
          { host: t.host, port: t.port, path: t.path, method: req.method, headers: req.headers, agent: false, lookup: t.lookup },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          },
        );
        upstream.on('error', (err) => (res.headersSent ? res.destroy() : res.writeHead(502).end(`${err.message}\n`)));
        req.pipe(upstream);
      },
      (err: unknown) => {
        const refusal = refusalOf(err);
        res.writeHead(refusal.status, { 'content-type': 'text/plain' }).end(refusal.message);
      },
    );
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    let upstream: Socket | undefined;
    const drop = (): void => {
      upstream?.destroy();
      client.destroy();
    };
    client.on('error', drop);
    decide(req.url, true).then(
      (t) => {
        if (client.destroyed) return;
        const up = connect({ host: t.host, port: t.port, lookup: t.lookup, autoSelectFamily: true }, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length > 0) up.write(head);
          up.pipe(client);
          client.pipe(up);
        });
        upstream = up;
        up.on('error', () => (client.writable ? client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n') : drop()));
      },
      (err: unknown) => {
        const refusal = refusalOf(err);
        client.end(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\ncontent-type: text/plain\r\n\r\n${refusal.message}`);
      },
    );
  });
  await rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  // Idle sandboxes must not keep a finished run alive.
  server.unref();
  return {
    socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Runs in a sandbox's holder (`node -e`, argv: socket path, port, ready file): listens on the
 * sandbox's loopback and forwards each connection to the proxy's socket, which commands cannot
 * reach themselves (it is in the scratch dir hidden from them).
 */
export const PROXY_BRIDGE =
  "const net=require('net'),fs=require('fs');const [sock,port,ready]=process.argv.slice(1);" +
  "net.createServer(c=>{const u=net.connect(sock);c.pipe(u).pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy())})" +
  ".listen(Number(port),'127.0.0.1',()=>fs.writeFileSync(ready,''))";
