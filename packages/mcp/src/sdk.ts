// The SDK's client side, loaded on first use: it takes a while to load, a session without MCP
// servers never needs it, and one with servers must not wait for it before its first request.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { SandboxStdioTransport } from './sandbox-stdio.js';

export interface Sdk {
  Client: typeof Client;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  McpError: typeof McpError;
  SandboxStdioTransport: typeof SandboxStdioTransport;
}

/** JSON-RPC error codes the client tells apart (the SDK's ErrorCode). */
export const CONNECTION_CLOSED = -32000;
export const REQUEST_TIMEOUT = -32001;
export const METHOD_NOT_FOUND = -32601;

let loading: Promise<Sdk> | undefined;

export function loadSdk(): Promise<Sdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('./sandbox-stdio.js'),
  ]).then(([client, http, types, stdio]) => ({
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    McpError: types.McpError,
    SandboxStdioTransport: stdio.SandboxStdioTransport,
  }));
  return loading;
}
