// Test fixtures shipped with the package (subpath `@infinity-code/mcp/testing`): real MCP servers
// written with the SDK's server API. Nothing here may import vitest.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * A stdio MCP server (`node <path>`), tools: echo {text}, add {a, b}, pixel (text and a PNG),
 * lines {n}, hang (answers only when cancelled), crash (exits with code 3), whoami (an id of the process),
 * write_file {path, text} and read_file {path} (relative to its working directory), getenv {name},
 * connect {port} (a TCP connection to 127.0.0.1), fail (a tool error).
 */
export const STDIO_FIXTURE = fileURLToPath(new URL('../../fixtures/stdio-server.mjs', import.meta.url));

export interface HttpFixture {
  /** The MCP endpoint, on loopback. */
  readonly url: string;
  /** Headers of every HTTP request received, in order. */
  readonly requests: Array<Record<string, string | string[] | undefined>>;
  /** Tool calls received, in order. */
  readonly calls: Array<{ tool: string; args: Record<string, unknown> }>;
  /** Calls the client cancelled (by tool name), in order. */
  readonly cancelled: string[];
  /** Resolves once a call has been cancelled by the client. */
  whenCancelled(): Promise<void>;
  /** Closes the server and every connection to it. */
  close(): Promise<void>;
}

/**
 * A streamable HTTP MCP server on 127.0.0.1 (stateful: one SDK server per session). Tools:
 * lookup {key} (answers `value of <key>`), slow {ms} (answers after that long), hang (answers
 * only when the client cancels it). With `holdInitialize`, a client's initialize is answered only
 * once that promise resolves (a server slow to start).
 */
export async function startHttpFixture(opts: { holdInitialize?: Promise<void> } = {}): Promise<HttpFixture> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const requests: HttpFixture['requests'] = [];
  const calls: HttpFixture['calls'] = [];
  const sockets = new Set<Socket>();
  const cancelled: string[] = [];
  const onCancel: Array<() => void> = [];

  const newServer = () => {
    const server = new McpServer({ name: 'fixture-http', version: '1.0.0' });
    server.registerTool('lookup', { description: 'Look a key up.', inputSchema: { key: z.string() } }, ({ key }) => {
      calls.push({ tool: 'lookup', args: { key } });
      return { content: [{ type: 'text', text: `value of ${key}` }] };
    });
    server.registerTool('slow', { description: 'Answer after ms milliseconds.', inputSchema: { ms: z.number() } }, async ({ ms }) => {
      calls.push({ tool: 'slow', args: { ms } });
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: 'text', text: `done after ${ms} ms` }] };
    });
    server.registerTool('hang', { description: 'Never answers.' }, async (extra) => {
      calls.push({ tool: 'hang', args: {} });
      await new Promise((resolve) => extra.signal.addEventListener('abort', resolve, { once: true }));
      cancelled.push('hang');
      for (const wake of onCancel.splice(0)) wake();
      return { content: [{ type: 'text', text: 'cancelled' }] };
    });
    return server;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    requests.push({ ...req.headers });
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body: unknown = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(typeof sessionId === 'string' ? 404 : 400).end();
        return;
      }
      await opts.holdInitialize;
      const fresh: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, fresh),
      });
      fresh.onclose = () => {
        if (fresh.sessionId) transports.delete(fresh.sessionId);
      };
      await newServer().connect(fresh);
      transport = fresh;
    }
    await transport.handleRequest(req, res, body);
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  http.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    calls,
    cancelled,
    whenCancelled: () => (cancelled.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => onCancel.push(resolve))),
    async close() {
      for (const t of transports.values()) await t.close().catch(() => undefined);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
