// One MCP server: its connection, its state, its tool list, its calls. A server that dies is
// started again once; after a second death its calls get an error saying so.
import type { ExecResult, Sandbox } from '@infinity-code/sandbox';
import { looksOffline } from '@infinity-code/tools';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { describeServer, type McpServerEntry } from './config.js';
import type { SandboxStdioTransport } from './sandbox-stdio.js';
import { CONNECTION_CLOSED, loadSdk, METHOD_NOT_FOUND, REQUEST_TIMEOUT, type Sdk } from './sdk.js';
import { StderrTail } from './stderr-tail.js';

/**
 * - `awaiting-approval`: a project server the user is being asked about (TUI).
 * - `not-approved`: a project server nobody approved, in a run that can't ask (headless).
 * - `declined`: the user said no.
 * - `starting`, `ready`; `restarting` after it died once; `suspended` while the sandbox's view is
 *   rebuilt (calls wait); `failed` (for good); `stopped` (the session closed).
 */
export type McpServerState =
  | 'awaiting-approval'
  | 'not-approved'
  | 'declined'
  | 'starting'
  | 'ready'
  | 'restarting'
  | 'suspended'
  | 'failed'
  | 'stopped';

const WAITING: ReadonlySet<McpServerState> = new Set(['awaiting-approval', 'starting', 'restarting', 'suspended']);

/** A server as `/mcp` and headless progress show it. */
export interface McpServerStatus {
  name: string;
  source: McpServerEntry['source'];
  file: string;
  transport: 'stdio' | 'http';
  /** The command line (variable names only) or URL. */
  target: string;
  state: McpServerState;
  /** Why it is not ready, or what happened last (a restart). */
  message?: string;
  /** The names the model calls its tools by. */
  tools: string[];
  /** Tools the model is not offered, with why (a name taken, a schema that doesn't compile). */
  skippedTools: Array<{ name: string; reason: string }>;
  restarts: number;
  /** stdio servers: where the process runs. */
  runsIn?: string;
  /** The last lines the server (its latest process) wrote to stderr. */
  stderr?: string;
}

/** Why an MCP tool call failed: `timeout` when it ran into the time limit for MCP tool calls. */
export type McpCallFailure = 'cancelled' | 'timeout' | 'lost' | 'server-error' | 'unavailable';

/** A call that could not be made or did not finish; the message is for the model. */
export class McpCallError extends Error {
  override readonly name = 'McpCallError';

  constructor(
    readonly failure: McpCallFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface ServerDeps {
  /** The sandbox a stdio server runs in (the root thread's). */
  sandbox: () => Promise<Sandbox>;
  /** Environment changes for stdio servers, under the server's own `env`. */
  env: Readonly<Record<string, string | undefined>>;
  startTimeoutMs: number;
  clientVersion: string;
  /** The server's tool list, each time it is (re)read. */
  onTools(server: McpServer, tools: McpTool[]): Promise<void>;
  /** Any change of state, message or tools. */
  onChange(server: McpServer): void;
}

/** One live connection: the SDK client and what its transport knows of the process behind it. */
interface Connection {
  client: Client;
  transport: Transport;
  stderr: StderrTail;
  /** Set for stdio servers: what is known of the process's end. */
  process?: SandboxStdioTransport;
}

/** How many times a server that died is started again. */
export const MAX_RESTARTS = 1;

export class McpServer {
  state: McpServerState = 'starting';
  message: string | undefined;
  restarts = 0;
  toolNames: string[] = [];
  skippedTools: Array<{ name: string; reason: string }> = [];
  runsIn: string | undefined;
  /** A stdio server confined without the machine's network (see offlineNote). */
  private offline = false;
  private conn: Connection | undefined;
  /** The latest connection's stderr, kept after it closed (why it failed). */
  private lastStderr: StderrTail | undefined;
  /** The connection being opened, closed at once if the server is stopped meanwhile. */
  private opening: Connection | undefined;
  /** Bumped by every connect and stop: a connect finishing after a newer one throws its result away. */
  private generation = 0;
  private waiters: Array<() => void> = [];

  constructor(
    readonly entry: McpServerEntry,
    private readonly deps: ServerDeps,
  ) {
    if (entry.config.type === 'stdio') this.runsIn = 'sandbox';
  }

  get name(): string {
    return this.entry.name;
  }

  status(): McpServerStatus {
    return {
      name: this.name,
      source: this.entry.source,
      file: this.entry.file,
      transport: this.entry.config.type,
      target: describeServer(this.entry.config),
      state: this.state,
      ...(this.message !== undefined ? { message: this.message } : {}),
      tools: [...this.toolNames],
      skippedTools: [...this.skippedTools],
      restarts: this.restarts,
      ...(this.runsIn !== undefined ? { runsIn: this.runsIn } : {}),
      ...(this.lastStderr?.text() ? { stderr: this.lastStderr.text() } : {}),
    };
  }

  /** Sets a state the manager decides (approval); `starting` is set by start(). */
  setState(state: McpServerState, message?: string): void {
    this.state = state;
    this.message = message;
    const ready = this.waiters;
    this.waiters = [];
    for (const wake of ready) wake();
    this.deps.onChange(this);
  }

  /** Connects, lists the tools, and becomes `ready` (or `failed`, saying why). Never throws. */
  async start(kind: 'starting' | 'restarting' = 'starting', message?: string): Promise<void> {
    const gen = ++this.generation;
    this.setState(kind, message);
    let sdk: Sdk;
    try {
      sdk = await loadSdk();
    } catch (err) {
      return this.setState('failed', `could not load the MCP client: ${errorText(err)}`);
    }
    if (gen !== this.generation) return;
    const stderr = new StderrTail();
    this.lastStderr = stderr;
    const transport = this.transport(sdk, stderr);
    const client = new sdk.Client(
      { name: 'infinity-code', version: this.deps.clientVersion },
      {
        capabilities: {},
        listChanged: {
          tools: {
            onChanged: (err, tools) => {
              if (!err && tools && this.conn?.client === client) void this.deps.onTools(this, tools);
            },
          },
        },
      },
    );
    const conn: Connection = { client, transport, stderr, ...(transport instanceof sdk.SandboxStdioTransport ? { process: transport } : {}) };
    this.opening = conn;
    client.onclose = () => this.closed(conn);
    // Out-of-band trouble (a stray line on stdout): the calls say what matters.
    client.onerror = () => undefined;
    try {
      await client.connect(transport, { timeout: this.deps.startTimeoutMs });
      const tools = await listAllTools(client, this.deps.startTimeoutMs, sdk);
      if (gen !== this.generation) return void (await client.close().catch(() => undefined));
      this.opening = undefined;
      this.conn = conn;
      await this.deps.onTools(this, tools);
      this.setState('ready', message);
    } catch (err) {
      if (this.opening === conn) this.opening = undefined;
      await client.close().catch(() => undefined);
      if (gen !== this.generation) return;
      const exited = endNote(conn);
      const why = exited
        ? `it exited before it was ready${exited}`
        : err instanceof sdk.McpError && err.code === REQUEST_TIMEOUT
          ? `it was not ready within ${seconds(this.deps.startTimeoutMs)}`
          : errorText(err);
      this.setState('failed', `could not start: ${why}.${this.offlineNote(conn)}${this.privateTmpNote()}${stderrNote(conn)}`);
    }
  }

  /**
   * Calls a tool. Waits while the server starts (or restarts), within the call's time limit.
   * Throws McpCallError with a message for the model when the call can't be made or is cut short.
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; timeoutMs: number; onProgress?: (text: string) => void },
  ): Promise<CallToolResult> {
    const deadline = Date.now() + opts.timeoutMs;
    const conn = await this.ready(opts.signal, deadline, opts.timeoutMs);
    // Loaded: the server is ready.
    const { McpError } = await loadSdk();
    try {
      const result = await conn.client.callTool({ name: tool, arguments: args }, undefined, {
        signal: opts.signal,
        timeout: Math.max(1, deadline - Date.now()),
        ...(opts.onProgress
          ? { onprogress: (p) => opts.onProgress!(p.message ?? (p.total ? `${p.progress}/${p.total}` : String(p.progress))) }
          : {}),
      });
      return result as CallToolResult;
    } catch (err) {
      if (opts.signal.aborted) throw new McpCallError('cancelled', 'the call was cancelled.');
      if (err instanceof McpError && err.code === REQUEST_TIMEOUT) {
        throw new McpCallError('timeout', `no answer within ${seconds(opts.timeoutMs)}, the time limit for MCP tool calls; the call was cancelled.`);
      }
      if (err instanceof McpError ? err.code === CONNECTION_CLOSED : this.entry.config.type === 'http') {
        // Over HTTP, fetch failures and HTTP errors of the transport itself (not JSON-RPC errors).
        this.lost(conn, err);
        const what = this.entry.config.type === 'stdio' ? 'exited' : 'could not be reached';
        throw new McpCallError('lost', `the MCP server "${this.name}" ${what} during the call${endNote(conn, err)}. ${this.afterLoss()}${stderrNote(conn)}`);
      }
      if (err instanceof McpError) throw new McpCallError('server-error', `the MCP server "${this.name}" answered with an error: ${err.message}`);
      throw err;
    }
  }

  /** Closes the connection for good (the session ends). */
  async stop(): Promise<void> {
    this.generation++;
    const conns = [this.conn, this.opening].filter((c): c is Connection => c !== undefined);
    this.conn = undefined;
    this.opening = undefined;
    if (!isFinal(this.state)) this.setState('stopped');
    await Promise.all(conns.map((c) => closeConnection(c)));
  }

  /** Stops the process without counting it as a death; calls wait until resume(). */
  async suspend(): Promise<void> {
    this.generation++;
    const conns = [this.conn, this.opening].filter((c): c is Connection => c !== undefined);
    this.conn = undefined;
    this.opening = undefined;
    this.setState('suspended', 'stopped while the sandbox is refreshed; it starts again right after');
    await Promise.all(conns.map((c) => closeConnection(c)));
  }

  private transport(sdk: Sdk, stderr: StderrTail): Transport {
    const config = this.entry.config;
    if (config.type === 'http') {
      return new sdk.StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    }
    return new sdk.SandboxStdioTransport(async () => {
      const sb = await this.deps.sandbox();
      this.offline = sb.contained && !config.network;
      this.runsIn = !sb.contained
        ? 'sandbox (unconfined: the machine has no confinement)'
        : config.network
          ? "sandbox, with the machine's network"
          : 'sandbox';
      // exec: the server is the process, so its exit is the command's. The network commands have
      // (none by default, or the proxy) unless its definition asks for the machine's.
      return sb.exec([config.command, ...config.args], { env: { ...this.deps.env, ...config.env }, stdin: true, ...(config.network ? { network: true } : {}) });
    }, stderr);
  }

  /**
   * Said of a server that failed without the machine's network when its stderr reads like it
   * wanted some (a DNS or routing error): servers had the machine's network before they had a
   * choice, and a definition written then may need `"network": "on"` now.
   */
  private offlineNote(conn: Connection): string {
    if (!this.offline || !looksOffline(conn.stderr.text())) return '';
    return ` It has no network but what commands have: "network": "on" in its definition gives it the machine's.`;
  }

  /**
   * Said of a confined stdio server that failed to start while its command line names files in
   * a temporary directory: the sandbox gives commands a /tmp of their own, so those files are not
   * there for it ("Cannot find module", "No such file"), which nothing else would explain.
   */
  private privateTmpNote(): string {
    const config = this.entry.config;
    if (config.type === 'http' || this.runsIn === undefined || this.runsIn.startsWith('sandbox (unconfined')) return '';
    const inTmp = [config.command, ...config.args].flatMap((a) => a.split('=')).find((a) => PRIVATE_DIRS.some((d) => a.startsWith(d)));
    if (inTmp === undefined) return '';
    return (
      ` It names ${inTmp}, but the sandbox gives commands a private /tmp (and /var/tmp, /dev/shm): files there on this machine ` +
      'are not visible to it. Move the server\'s files elsewhere (into the repository, or a directory listed in "sandbox": {"readable": [...]} of your config).'
    );
  }

  /** The connection's transport closed: unless we closed it, the server died. */
  private closed(conn: Connection): void {
    if (this.conn !== conn) return;
    this.lost(conn, undefined);
  }

  /** The server behind `conn` is gone: start it again once, or give up on it. */
  private lost(conn: Connection, err: unknown): void {
    if (this.conn !== conn) return;
    this.conn = undefined;
    void closeConnection(conn);
    const what = `${this.entry.config.type === 'stdio' ? 'exited' : 'could not be reached'}${endNote(conn, err)}`;
    if (this.restarts < MAX_RESTARTS) {
      this.restarts++;
      void this.start('restarting', `restarted once after it ${what}`);
    } else {
      this.setState('failed', `it ${what} again after a restart, so it is not started any more this session`);
    }
  }

  private afterLoss(): string {
    if (this.state === 'failed') return `It had been restarted once already: its tools are unavailable for the rest of the session (the user can see it in /mcp).`;
    return 'It is being restarted; call again if the call is safe to repeat (it may have partly run).';
  }

  /** The live connection, waiting while the server starts; throws when it won't be ready in time. */
  private async ready(signal: AbortSignal, deadline: number, timeoutMs: number): Promise<Connection> {
    for (;;) {
      if (signal.aborted) throw new McpCallError('cancelled', 'the call was cancelled.');
      if (this.state === 'ready' && this.conn) return this.conn;
      if (!WAITING.has(this.state)) throw new McpCallError('unavailable', this.unavailable());
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new McpCallError('timeout', `the MCP server "${this.name}" was still ${this.state === 'awaiting-approval' ? 'waiting for the user to allow it' : 'starting'} after ${seconds(timeoutMs)}, the time limit for MCP tool calls.`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        signal.addEventListener('abort', done, { once: true });
        this.waiters.push(done);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
      });
    }
  }

  /** Why calls can't be made now, for the model. */
  private unavailable(): string {
    const why = this.message ? `: ${this.message}` : '';
    switch (this.state) {
      case 'failed':
        return `the MCP server "${this.name}" is not running${why}. Its tools are unavailable for the rest of the session.`;
      case 'declined':
      case 'not-approved':
        return `the MCP server "${this.name}" was not started${why}.`;
      default:
        return `the MCP server "${this.name}" is ${this.state}${why}.`;
    }
  }
}

function isFinal(state: McpServerState): boolean {
  return state === 'failed' || state === 'stopped' || state === 'declined' || state === 'not-approved';
}

async function listAllTools(client: Client, timeout: number, sdk: Sdk): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  try {
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor && tools.length < 10_000);
  } catch (err) {
    // A server without tools (it serves prompts or resources only).
    if (err instanceof sdk.McpError && err.code === METHOD_NOT_FOUND) return [];
    throw err;
  }
  return tools;
}

async function closeConnection(conn: Connection): Promise<void> {
  await conn.client.close().catch(() => undefined);
}

/** What is known of how a connection ended: a stdio server's exit status, or the HTTP failure. */
function endNote(conn: Connection, err?: unknown): string {
  if (conn.process) {
    const exit: ExecResult | undefined = conn.process.exit;
    if (!exit) return '';
    return exit.exitCode !== null ? ` (exit code ${exit.exitCode})` : ` (killed by ${exit.signal ?? 'a signal'})`;
  }
  return err !== undefined ? ` (${errorText(err)})` : '';
}

/** Where a sandboxed process sees its own empty directories instead of the machine's. */
const PRIVATE_DIRS = ['/tmp/', '/var/tmp/', '/dev/shm/'];

/** The last lines the server wrote to stderr, as the end of a message. */
function stderrNote(conn: Connection): string {
  const text = conn.stderr.text();
  return text ? ` Its last stderr lines:\n${text}` : '';
}

export function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error && !err.message.includes(cause.message) ? `${err.message} (${cause.message})` : err.message;
}

export function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
