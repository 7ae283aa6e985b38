import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';

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

/** Whether `host` is one of `allow` or a subdomain of one. */
export function hostAllowed(host: string, allow: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return allow.some((d) => h === d || h.endsWith(`.${d}`));
}

/** `host:port` of a CONNECT request, or of an absolute http:// URL. */
function target(raw: string | undefined, connectForm: boolean): { host: string; port: number; path: string } | undefined {
  if (!raw) return undefined;
  try {
    if (connectForm) {
      const u = new URL(`http://${raw}`);
      return { host: u.hostname, port: Number(u.port || 443), path: '' };
    }
    const u = new URL(raw);
    if (u.protocol !== 'http:') return undefined;
    return { host: u.hostname, port: Number(u.port || 80), path: `${u.pathname}${u.search}` };
  } catch {
    return undefined;
  }
}

export interface NetworkProxy {
  readonly socketPath: string;
  close(): Promise<void>;
}

/**
 * An HTTP proxy on a Unix socket that lets through only requests for allowed domains: CONNECT
 * tunnels (HTTPS, git, package registries) and plain http:// requests. Sandboxes with a domain
 * allowlist have no network but their loopback, where a bridge (see PROXY_BRIDGE) forwards to
 * this socket; everything else is refused with 403 and a reason a person can act on.
 */
export async function startNetworkProxy(socketPath: string, allow: readonly string[]): Promise<NetworkProxy> {
  const refuse = (host: string): string =>
    `Infinity Code: ${host} is not in the sandbox's network allowlist (sandbox.network in the config).\n`;
  const server: Server = createServer((req: IncomingMessage, res) => {
    const t = target(req.url, false);
    if (!t || !hostAllowed(t.host, allow)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(refuse(t?.host ?? String(req.url)));
      return;
    }
    const upstream = request({ host: t.host, port: t.port, path: t.path, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', (err) => res.headersSent ? res.destroy() : res.writeHead(502).end(`${err.message}\n`));
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const t = target(req.url, true);
    if (!t || !hostAllowed(t.host, allow)) {
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${refuse(t?.host ?? String(req.url))}`);
      return;
    }
    const upstream = connect(t.port, t.host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const drop = (): void => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', () => (client.writable ? client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n') : drop()));
    client.on('error', drop);
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
