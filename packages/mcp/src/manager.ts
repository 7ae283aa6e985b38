// The session's MCP servers: started together when the session opens, without holding it up;
// their tools handed to the runtime as each server lists them.
import type { Tool } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import type { OutputLimits } from '@infinity-code/tools';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerEntry } from './config.js';
import { modelToolName } from './names.js';
import { McpServer, type McpServerState, type McpServerStatus } from './server.js';
import { mcpTool } from './tool-adapter.js';
import type { McpTrust } from './trust.js';

export interface StartMcpOptions {
  servers: readonly McpServerEntry[];
  /** Whether each may start (see trustOf). */
  trust(entry: McpServerEntry): McpTrust;
  /**
   * Asks the user whether a project server nobody decided on may start (the TUI; the answer is
   * remembered by the caller). Absent (headless): such servers are not started.
   */
  askApproval?(entry: McpServerEntry, signal: AbortSignal): Promise<boolean>;
  /** Said of a project server not started for want of approval: how to approve it. */
  approvalHint?(entry: McpServerEntry): string;
  /** The sandbox stdio servers run in: the root thread's. */
  sandbox(): Promise<Sandbox>;
  /** Offers tools to the model from now on (LocalSystem.addTools); returns those it left out. */
  addTools(tools: Tool[]): Promise<Array<{ name: string; reason: string }>>;
  /** The longest a tool call may take, waiting for its server to start included (default 10 minutes). */
  toolTimeoutMs?: number;
  /** The longest a server may take to start and list its tools (default 60 s). */
  startTimeoutMs?: number;
  /** Said after a call's timeout: where the limit is set. */
  timeoutHelp?: string;
  /** How much of a result's text the model gets (defaults: see DEFAULT_MCP_OUTPUT_LIMITS). */
  outputLimits?: OutputLimits;
  /** Environment changes for stdio servers (e.g. the user's secrets removed), under each server's own `env`. */
  env?: Readonly<Record<string, string | undefined>>;
  clientVersion?: string;
}

/** What the session holds: the servers' state and tools, and their end. */
export interface McpServers {
  /** Every server, in the order defined. */
  status(): McpServerStatus[];
  /** Each change of a server (state, message, tools). Returns the unsubscribe function. */
  onChange(listener: (status: McpServerStatus) => void): () => void;
  /** The tools handed to the runtime so far. */
  tools(): Tool[];
  /** Resolves once no server is starting or waiting for approval. */
  settled(): Promise<void>;
  /**
   * Runs `fn` with the stdio servers stopped (a base refresh rebuilds the sandbox's view, which
   * their processes would not survive, and waits for the sandbox's processes to end); they start
   * again after it, without counting as a restart. Calls made meanwhile wait.
   */
  whileSuspended<T>(fn: () => Promise<T>): Promise<T>;
  /** Stops every server and withdraws open approval questions. */
  close(): Promise<void>;
}

export const DEFAULT_MCP_TOOL_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_MCP_START_TIMEOUT_MS = 60_000;

/** Tool results are often one long line of JSON: longer lines than command output, as much text. */
export const DEFAULT_MCP_OUTPUT_LIMITS: Required<OutputLimits> = {
  headLines: 400,
  headChars: 20_000,
  tailLines: 100,
  tailChars: 10_000,
  maxLineChars: 10_000,
};

const PENDING: ReadonlySet<McpServerState> = new Set(['awaiting-approval', 'starting', 'restarting', 'suspended']);

/**
 * Starts the servers it may, all at once, and returns at once: nothing here waits for a server.
 * A server's tools reach the model (through `addTools`) from the first completion after it
 * listed them; a call made while its server still starts waits for it.
 */
export function startMcpServers(opts: StartMcpOptions): McpServers {
  const listeners = new Set<(status: McpServerStatus) => void>();
  const settledWaiters: Array<() => void> = [];
  const closing = new AbortController();
  /** Model name → the server that owns it. */
  const owners = new Map<string, string>();
  const added: Tool[] = [];
  const adapterOptions = {
    timeoutMs: opts.toolTimeoutMs ?? DEFAULT_MCP_TOOL_TIMEOUT_MS,
    ...(opts.timeoutHelp ? { timeoutHelp: opts.timeoutHelp } : {}),
    limits: { ...DEFAULT_MCP_OUTPUT_LIMITS, ...opts.outputLimits },
  };

  const isSettled = () => servers.every((s) => !PENDING.has(s.state));
  const onChange = (server: McpServer) => {
    const status = server.status();
    for (const l of listeners) l(status);
    if (isSettled()) for (const wake of settledWaiters.splice(0)) wake();
  };

  const onTools = async (server: McpServer, tools: McpTool[]): Promise<void> => {
    const fresh: Tool[] = [];
    const skipped: Array<{ name: string; reason: string }> = [];
    const names: string[] = [];
    for (const tool of tools) {
      const name = modelToolName(server.name, tool.name);
      const owner = owners.get(name);
      if (owner === server.name) {
        names.push(name);
        continue;
      }
      if (owner !== undefined) {
        skipped.push({ name: tool.name, reason: `its name ${name} is taken by a tool of server "${owner}"` });
        continue;
      }
      fresh.push(mcpTool(server, tool, name, adapterOptions));
    }
    const rejected = fresh.length > 0 ? await opts.addTools(fresh) : [];
    const out = new Set(rejected.map((r) => r.name));
    for (const r of rejected) skipped.push({ name: r.name, reason: r.reason });
    for (const tool of fresh) {
      if (out.has(tool.name)) continue;
      owners.set(tool.name, server.name);
      added.push(tool);
      names.push(tool.name);
    }
    server.toolNames = names;
    server.skippedTools = skipped;
  };

  const deps = {
    sandbox: () => opts.sandbox(),
    env: opts.env ?? {},
    startTimeoutMs: opts.startTimeoutMs ?? DEFAULT_MCP_START_TIMEOUT_MS,
    clientVersion: opts.clientVersion ?? '0.0.0',
    onTools,
    onChange,
  };
  const servers = opts.servers.map((entry) => new McpServer(entry, deps));

  for (const server of servers) {
    const trust = opts.trust(server.entry);
    if (trust === 'trusted' || trust === 'approved') {
      void server.start();
    } else if (trust === 'declined') {
      server.setState('declined', `the user declined this project server${opts.approvalHint ? `; ${opts.approvalHint(server.entry)}` : ''}`);
    } else if (opts.askApproval) {
      server.setState('awaiting-approval');
      void opts.askApproval(server.entry, closing.signal).then(
        (yes) => {
          if (closing.signal.aborted || server.state !== 'awaiting-approval') return;
          if (yes) void server.start();
          else server.setState('declined', 'the user declined it');
        },
        (err: unknown) => server.setState('failed', `could not ask the user: ${(err as Error).message}`),
      );
    } else {
      server.setState(
        'not-approved',
        `it is defined by the repository (${server.entry.file}) and nobody approved it${opts.approvalHint ? `; ${opts.approvalHint(server.entry)}` : ''}`,
      );
    }
  }

  return {
    status: () => servers.map((s) => s.status()),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    tools: () => [...added],
    settled: () => (isSettled() ? Promise.resolve() : new Promise<void>((resolve) => settledWaiters.push(resolve))),
    async whileSuspended(fn) {
      const stdio = servers.filter((s) => s.entry.config.type === 'stdio' && (s.state === 'ready' || s.state === 'starting' || s.state === 'restarting'));
      await Promise.all(stdio.map((s) => s.suspend()));
      try {
        return await fn();
      } finally {
        if (!closing.signal.aborted) for (const s of stdio) if (s.state === 'suspended') void s.start();
      }
    },
    async close() {
      closing.abort();
      await Promise.all(servers.map((s) => s.stop()));
      for (const wake of settledWaiters.splice(0)) wake();
    },
  };
}
